import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletion, ChatModel, ChatModelOptions, ChatRequest } from './contract';

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
    const res = await this.client.chat.completions.create({
      model: this.model,
      temperature: 0,
      max_tokens: req.maxTokens,
      ...(req.json ? { response_format: { type: 'json_object' as const } } : {}),
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.user },
      ],
    });
    return { text: res.choices[0]?.message.content ?? '', inputTokens: res.usage?.prompt_tokens ?? 0, outputTokens: res.usage?.completion_tokens ?? 0 };
  }
}

/** Anthropic messages API. */
export class AnthropicChatModel implements ChatModel {
  readonly provider = 'anthropic' as const;
  readonly model: string;
  private readonly client: Anthropic;

  constructor(opts: ChatModelOptions) {
    this.model = opts.model;
    this.client = new Anthropic({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, timeout: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2 });
  }

  async complete(req: ChatRequest): Promise<ChatCompletion> {
    const res = await this.client.messages.create({
      model: this.model,
      max_tokens: req.maxTokens,
      temperature: 0,
      system: req.system,
      messages: [{ role: 'user', content: req.user }],
    });
    const text = res.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return { text, inputTokens: res.usage.input_tokens, outputTokens: res.usage.output_tokens };
  }
}
