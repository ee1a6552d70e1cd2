import { MnemographError, errorMessage } from '../errors';
import type { Logger } from '../infra/logger';
import { AnthropicChatModel, OpenAIChatModel, usageOf, type ChatCompletion, type ChatModel, type ChatModelOptions, type LlmProvider, type PriceOverride } from '../llm';
import { ExtractionRejectedError, type ExtractionResult, type ExtractionWindow, type Extractor, type UsageSink } from './contract';
import { LLM_EXTRACTION_JSON_SCHEMA, parseLlmExtraction } from './llm-output';
import { EXTRACTION_SYSTEM_PROMPT, renderWindow } from './prompt';

/** The chat model's connection settings plus what extraction adds. */
export interface LlmExtractorOptions extends Omit<ChatModelOptions, 'provider'> {
  maxOutputTokens: number;
  /**
   * Send the answer's JSON Schema as the provider's structured output (OpenAI `json_schema`
   * strict, Anthropic forced tool use); default true. Off: JSON mode / the prompt alone, for
   * OpenAI-compatible servers that do not implement it.
   */
  structuredOutput?: boolean;
  price?: PriceOverride;
  usage?: UsageSink;
  log: Logger;
}

/** The structured output every provider is asked for (see `LlmExtractionWireSchema`). */
export const EXTRACTION_OUTPUT = {
  name: 'record_memory',
  description: 'Records the entities, facts and relationships extracted from the conversation window.',
  jsonSchema: LLM_EXTRACTION_JSON_SCHEMA,
};

/**
 * One combined extraction call per window, shared by every LLM provider: render the
 * window, complete (with the answer's schema as structured output unless switched off),
 * repair/validate with the same zod schema either way, cost the call. A refusal or an
 * answer cut off at the token cap is rejected whole. Usage is recorded for every call,
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
      completion = await this.chat.complete({
        system: EXTRACTION_SYSTEM_PROMPT,
        user: renderWindow(window),
        maxTokens: this.opts.maxOutputTokens,
        json: true,
        ...(this.opts.structuredOutput === false ? {} : { schema: EXTRACTION_OUTPUT }),
      });
    } catch (err) {
      const e = new MnemographError('EXTRACTION_FAILED', 'upstream', `${this.provider} extraction (${this.model}) failed: ${errorMessage(err)}; the input stays queued`, {}, { cause: err });
      await this.record(window, this.priced(0, 0, performance.now() - t0), false, e.message);
      throw e;
    }
    const usage = this.priced(completion.inputTokens, completion.outputTokens, performance.now() - t0);
    try {
      if (completion.refusal) throw new ExtractionRejectedError(`the model refused: ${completion.refusal.slice(0, 200)}`);
      if (completion.truncated)
        throw new ExtractionRejectedError(`the answer was cut off at ${this.opts.maxOutputTokens} output tokens (raise EXTRACTION_MAX_OUTPUT_TOKENS or lower EXTRACTION_WINDOW_TURNS)`);
      const parsed = parseLlmExtraction(completion.text, window.turns);
      // The provider ignored the schema (a model or server without structured output): the text went through the repair path.
      if (this.opts.structuredOutput !== false && !completion.structured) parsed.repairs.unshift('answered without structured output; parsed from text');
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

/** The extractor over OpenAI chat completions (strict `json_schema` structured output); with a base URL, any OpenAI-compatible server. */
export class OpenAIExtractor extends LlmExtractor {
  constructor(provider: 'openai' | 'openai-compatible', opts: LlmExtractorOptions) {
    super(new OpenAIChatModel({ ...opts, provider }), opts);
  }
}

/** The extractor over Anthropic's messages API (the schema is a tool the model must call). */
export class AnthropicExtractor extends LlmExtractor {
  constructor(opts: LlmExtractorOptions) {
    super(new AnthropicChatModel({ ...opts, provider: 'anthropic' }), opts);
  }
}
