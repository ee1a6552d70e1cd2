import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletion, ChatModel, ChatModelOptions, ChatRequest } from './contract';

/**
 * OpenAI reasoning models (o1, o3, o4-mini, gpt-5...) refuse `temperature` other than the
 * default, and every current OpenAI model takes `max_completion_tokens` (`max_tokens` is
 * deprecated and refused by the reasoning ones).
 */
export function isReasoningModel(model: string): boolean {
  return /^(?:o\d|gpt-5)/i.test(model.replace(/^.*\//, ''));
}

/** OpenAI chat completions; with a base URL, any OpenAI-compatible server (vLLM, Ollama, LocalAI...). */
export class OpenAIChatModel implements ChatModel {
  readonly provider: 'openai' | 'openai-compatible';
  readonly model: string;
  private readonly client: OpenAI;

  constructor(opts: ChatModelOptions & { provider: 'openai' | 'openai-compatible' }) {
    this.provider = opts.provider;
    this.model = opts.model;
    this.client = new OpenAI({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, timeout: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2 });
  }

  async complete(req: ChatRequest): Promise<ChatCompletion> {
    // OpenAI itself gets the current parameter; compatible servers (vLLM, Ollama, LocalAI)
    // still know only `max_tokens`.
    const tokens = this.provider === 'openai' ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens };
    const responseFormat = req.schema
      ? { type: 'json_schema' as const, json_schema: { name: req.schema.name, description: req.schema.description, schema: req.schema.jsonSchema, strict: true } }
      : req.json
        ? { type: 'json_object' as const }
        : undefined;
    const res = await this.client.chat.completions.create({
      model: this.model,
      ...(isReasoningModel(this.model) ? {} : { temperature: 0 }),
      ...tokens,
      ...(responseFormat ? { response_format: responseFormat } : {}),
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.user },
      ],
    });
    const choice = res.choices[0];
    return {
      text: choice?.message.content ?? '',
      inputTokens: res.usage?.prompt_tokens ?? 0,
      outputTokens: res.usage?.completion_tokens ?? 0,
      ...(req.schema && choice?.message.content ? { structured: true } : {}),
      ...(choice?.message.refusal ? { refusal: choice.message.refusal } : {}),
      ...(choice?.finish_reason === 'length' ? { truncated: true } : {}),
    };
  }
}

/** Anthropic messages API; a schema becomes one tool the model is made to call. */
export class AnthropicChatModel implements ChatModel {
  readonly provider = 'anthropic' as const;
  readonly model: string;
  private readonly client: Anthropic;

  constructor(opts: ChatModelOptions) {
    this.model = opts.model;
    this.client = new Anthropic({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, timeout: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2 });
  }

  async complete(req: ChatRequest): Promise<ChatCompletion> {
    const tool = req.schema ? { name: req.schema.name, description: req.schema.description, input_schema: { ...req.schema.jsonSchema, type: 'object' as const } } : undefined;
    const res = await this.client.messages.create({
      model: this.model,
      max_tokens: req.maxTokens,
      temperature: 0,
      system: req.system,
      messages: [{ role: 'user', content: req.user }],
      ...(tool ? { tools: [tool], tool_choice: { type: 'tool' as const, name: tool.name } } : {}),
    });
    const call = tool ? res.content.find((b) => b.type === 'tool_use' && b.name === tool.name) : undefined;
    // Without the tool call (a model that answered in prose), the text goes to the caller's repair path.
    const text = call && call.type === 'tool_use' ? JSON.stringify(call.input) : res.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return {
      text,
      inputTokens: res.usage.input_tokens,
      outputTokens: res.usage.output_tokens,
      ...(call ? { structured: true } : {}),
      ...(res.stop_reason === 'refusal' ? { refusal: text || 'the model refused to answer' } : {}),
      ...(res.stop_reason === 'max_tokens' ? { truncated: true } : {}),
    };
  }
}
