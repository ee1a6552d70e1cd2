/** One chat completion: a system prompt and one user message in, text and token counts out. */
export interface ChatRequest {
  system: string;
  user: string;
  maxTokens: number;
  /** Ask for a JSON object (OpenAI's JSON mode; Anthropic is told so by the prompt). */
  json?: boolean;
}

export interface ChatCompletion {
  text: string;
  inputTokens: number;
  outputTokens: number;
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
