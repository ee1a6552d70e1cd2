/**
 * A JSON Schema the answer must follow, sent as the provider's structured output: OpenAI's
 * `response_format: {type: 'json_schema', strict: true}`, Anthropic's forced tool use (one
 * tool whose `input_schema` it is). For OpenAI's strict mode every object must list all its
 * properties as required and set `additionalProperties: false`.
 */
export interface StructuredOutput {
  /** `^[a-zA-Z0-9_-]{1,64}$`: the schema's name (OpenAI) and the tool's name (Anthropic). */
  name: string;
  description: string;
  jsonSchema: Record<string, unknown>;
}

/** One chat completion: a system prompt and one user message in, text and token counts out. */
export interface ChatRequest {
  system: string;
  user: string;
  maxTokens: number;
  /** Ask for a JSON object (OpenAI's JSON mode; Anthropic is told so by the prompt). Ignored when `schema` is given. */
  json?: boolean;
  /** Ask for JSON following this schema through the provider's structured output. */
  schema?: StructuredOutput;
}

export interface ChatCompletion {
  /** The answer: the text, or with `schema` the structured answer as JSON text (the tool input for Anthropic). */
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** True when `text` came from the provider's structured output (a tool call for Anthropic), not free text. */
  structured?: boolean;
  /** The model declined to answer (OpenAI `message.refusal`, Anthropic `stop_reason: refusal`). */
  refusal?: string;
  /** The answer was cut off at the output token cap. */
  truncated?: boolean;
}

export type LlmProvider = 'openai' | 'anthropic' | 'openai-compatible';

/** A chat model behind a provider's API, called through the provider's own SDK. */
export interface ChatModel {
  readonly provider: LlmProvider;
  readonly model: string;
  complete(req: ChatRequest): Promise<ChatCompletion>;
}

export interface ChatModelOptions {
  provider: LlmProvider;
  model: string;
  apiKey?: string;
  /** Required for openai-compatible; for the others, a proxy or a local server. */
  baseUrl?: string;
  timeoutMs: number;
  maxRetries?: number;
}

/** What one LLM call cost (rules-based work reports zeros under its own provider name). */
export interface LlmUsage {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  latencyMs: number;
}

/** Where every LLM call's usage goes (`llm_usage` in Postgres), with who and what it was for. */
export interface UsageSink {
  record(entry: LlmUsage & { userId: string; conversationId?: string; purpose: string; ok: boolean; error?: string }): Promise<void>;
}
