import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MnemographError, errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import { ExtractionRejectedError, type ExtractionResult, type ExtractionWindow, type Extractor, type UsageSink } from './contract';
import { parseLlmExtraction } from './llm-output';
import { costUsd, type PriceOverride } from './pricing';
import { EXTRACTION_SYSTEM_PROMPT, renderWindow } from './prompt';

export interface LlmExtractorOptions {
  model: string;
  apiKey?: string;
  baseUrl?: string;
  timeoutMs: number;
  maxOutputTokens: number;
  maxRetries?: number;
  price?: PriceOverride;
  usage?: UsageSink;
  log: Logger;
}

interface Completion {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * One combined extraction call per window, shared by every LLM provider: render the
 * window, complete, repair/validate, cost the call. Usage is recorded for every call,
 * including rejected ones (they were paid for).
 */
abstract class LlmExtractor implements Extractor {
  abstract readonly provider: 'openai' | 'anthropic' | 'openai-compatible';
  constructor(protected readonly opts: LlmExtractorOptions) {}

  get model(): string {
    return this.opts.model;
  }

  protected abstract complete(system: string, user: string): Promise<Completion>;

  async extract(window: ExtractionWindow): Promise<ExtractionResult> {
    if (window.turns.length === 0) return { entities: [], facts: [], relationships: [], repairs: [], usage: this.usageOf(0, 0, 0) };
    const t0 = performance.now();
    let completion: Completion;
    try {
      completion = await this.complete(EXTRACTION_SYSTEM_PROMPT, renderWindow(window));
    } catch (err) {
      const e = new MnemographError('EXTRACTION_FAILED', 'upstream', `${this.provider} extraction (${this.model}) failed: ${errorMessage(err)}; the input stays queued`, {}, { cause: err });
      await this.record(window, this.usageOf(0, 0, performance.now() - t0), false, e.message);
      throw e;
    }
    const usage = this.usageOf(completion.inputTokens, completion.outputTokens, performance.now() - t0);
    try {
      const parsed = parseLlmExtraction(completion.text, window.turns);
      if (parsed.repairs.length > 0) this.opts.log.info({ subsystem: 'extraction', provider: this.provider, repairs: parsed.repairs }, 'repaired extraction output');
      await this.record(window, usage, true);
      return { ...parsed, usage };
    } catch (err) {
      const reason = err instanceof ExtractionRejectedError ? err.reason : errorMessage(err);
      this.opts.log.warn({ subsystem: 'extraction', provider: this.provider, model: this.model, reason, sample: completion.text.slice(0, 200) }, 'rejected extraction output');
      await this.record(window, usage, false, reason);
      throw err;
    }
  }

  private usageOf(inputTokens: number, outputTokens: number, latencyMs: number) {
    return { provider: this.provider, model: this.model, inputTokens, outputTokens, costUsd: costUsd(this.model, inputTokens, outputTokens, this.opts.price), latencyMs };
  }

  private async record(window: ExtractionWindow, usage: ExtractionResult['usage'], ok: boolean, error?: string): Promise<void> {
    if (!this.opts.usage) return;
    try {
      await this.opts.usage.record({ ...usage, userId: window.userId, conversationId: window.conversationId, purpose: 'extraction', ok, error });
    } catch (err) {
      // Accounting must not turn a good extraction into a failed one.
      this.opts.log.warn({ subsystem: 'extraction', err: errorMessage(err) }, 'could not record LLM usage');
    }
  }
}

/** OpenAI chat completions (JSON mode); with a base URL, any OpenAI-compatible server. */
export class OpenAIExtractor extends LlmExtractor {
  private readonly client: OpenAI;
  constructor(
    readonly provider: 'openai' | 'openai-compatible',
    opts: LlmExtractorOptions,
  ) {
    super(opts);
    this.client = new OpenAI({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, timeout: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2 });
  }

  protected async complete(system: string, user: string): Promise<Completion> {
    const res = await this.client.chat.completions.create({
      model: this.model,
      temperature: 0,
      max_tokens: this.opts.maxOutputTokens,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    return { text: res.choices[0]?.message.content ?? '', inputTokens: res.usage?.prompt_tokens ?? 0, outputTokens: res.usage?.completion_tokens ?? 0 };
  }
}

/** Anthropic messages API; the JSON object is asked for in the prompt and pre-filled with "{". */
export class AnthropicExtractor extends LlmExtractor {
  readonly provider = 'anthropic' as const;
  private readonly client: Anthropic;
  constructor(opts: LlmExtractorOptions) {
    super(opts);
    this.client = new Anthropic({ apiKey: opts.apiKey ?? 'not-needed', baseURL: opts.baseUrl, timeout: opts.timeoutMs, maxRetries: opts.maxRetries ?? 2 });
  }

  protected async complete(system: string, user: string): Promise<Completion> {
    const res = await this.client.messages.create({
      model: this.model,
      max_tokens: this.opts.maxOutputTokens,
      temperature: 0,
      system,
      messages: [{ role: 'user', content: user }],
    });
    const text = res.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return { text, inputTokens: res.usage.input_tokens, outputTokens: res.usage.output_tokens };
  }
}
