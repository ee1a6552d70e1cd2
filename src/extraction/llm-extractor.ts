import { MnemographError, errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import { AnthropicChatModel, OpenAIChatModel, usageOf, type ChatCompletion, type ChatModel, type ChatModelOptions, type LlmProvider, type PriceOverride } from '../llm';
import { ExtractionRejectedError, type ExtractionResult, type ExtractionWindow, type Extractor, type UsageSink } from './contract';
import { parseLlmExtraction } from './llm-output';
import { EXTRACTION_SYSTEM_PROMPT, renderWindow } from './prompt';

/** The chat model's connection settings plus what extraction adds. */
export interface LlmExtractorOptions extends Omit<ChatModelOptions, 'provider'> {
  maxOutputTokens: number;
  price?: PriceOverride;
  usage?: UsageSink;
  log: Logger;
}

/**
 * One combined extraction call per window, shared by every LLM provider: render the
 * window, complete, repair/validate, cost the call. Usage is recorded for every call,
 * including rejected ones (they were paid for).
 */
export class LlmExtractor implements Extractor {
  constructor(
    private readonly chat: ChatModel,
    private readonly opts: LlmExtractorOptions,
  ) {}

  get provider(): LlmProvider {
    return this.chat.provider;
  }

  get model(): string {
    return this.chat.model;
  }

  async extract(window: ExtractionWindow): Promise<ExtractionResult> {
    if (window.turns.length === 0) return { entities: [], facts: [], relationships: [], repairs: [], usage: this.priced(0, 0, 0) };
    const t0 = performance.now();
    let completion: ChatCompletion;
    try {
      completion = await this.chat.complete({ system: EXTRACTION_SYSTEM_PROMPT, user: renderWindow(window), maxTokens: this.opts.maxOutputTokens, json: true });
    } catch (err) {
      const e = new MnemographError('EXTRACTION_FAILED', 'upstream', `${this.provider} extraction (${this.model}) failed: ${errorMessage(err)}; the input stays queued`, {}, { cause: err });
      await this.record(window, this.priced(0, 0, performance.now() - t0), false, e.message);
      throw e;
    }
    const usage = this.priced(completion.inputTokens, completion.outputTokens, performance.now() - t0);
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

  private priced(inputTokens: number, outputTokens: number, latencyMs: number) {
    return usageOf(this.chat, inputTokens, outputTokens, latencyMs, this.opts.price);
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

/** The extractor over OpenAI chat completions (JSON mode); with a base URL, any OpenAI-compatible server. */
export class OpenAIExtractor extends LlmExtractor {
  constructor(provider: 'openai' | 'openai-compatible', opts: LlmExtractorOptions) {
    super(new OpenAIChatModel({ ...opts, provider }), opts);
  }
}

/** The extractor over Anthropic's messages API (the JSON object is asked for in the prompt). */
export class AnthropicExtractor extends LlmExtractor {
  constructor(opts: LlmExtractorOptions) {
    super(new AnthropicChatModel({ ...opts, provider: 'anthropic' }), opts);
  }
}
