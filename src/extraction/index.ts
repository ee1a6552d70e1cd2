import type { Config } from '../config';
import type { Logger } from '../infra/logger';
import type { Extractor, UsageSink } from './contract';
import { AnthropicExtractor, OpenAIExtractor } from './llm-extractor';
import { RulesThreadExtractor } from './rules-thread-extractor';

export * from './contract';
export { CERTAINTY_CONFIDENCE, calibrate } from './calibration';
export { resolveContradiction, contradicts, normalizeValue, type Resolution, type StoredComparableFact, type ComparableFact } from './contradictions';
export { LLM_EXTRACTION_JSON_SCHEMA, LlmExtractionSchema, LlmExtractionWireSchema, normalizeJsonValues, parseLlmExtraction } from './llm-output';
export { RulesExtractor } from './rules-extractor';
export { RulesThreadExtractor } from './rules-thread-extractor';
export { AnthropicExtractor, EXTRACTION_OUTPUT, OpenAIExtractor } from './llm-extractor';
export { PgUsageSink } from '../llm';

/** The settings the extractor factory reads (see Config['extraction']). */
export type ExtractionConfig = Pick<
  Config['extraction'],
  'provider' | 'model' | 'baseUrl' | 'apiKey' | 'timeoutMs' | 'maxOutputTokens' | 'structuredOutput' | 'priceInputPerMTok' | 'priceOutputPerMTok'
>;

/**
 * Builds the configured extractor (called by the composition root only). The rules run on a
 * thread of their own at background priority (rules-thread-extractor.ts); the LLM extractors
 * wait on the network, on the main thread.
 */
export function createExtractor(config: ExtractionConfig, deps: { log: Logger; usage?: UsageSink }): Extractor {
  if (config.provider === 'rules') return new RulesThreadExtractor();
  const opts = {
    model: config.model,
    apiKey: config.apiKey,
    baseUrl: config.baseUrl,
    timeoutMs: config.timeoutMs,
    maxOutputTokens: config.maxOutputTokens,
    structuredOutput: config.structuredOutput,
    price: { inputPerMTok: config.priceInputPerMTok, outputPerMTok: config.priceOutputPerMTok },
    usage: deps.usage,
    log: deps.log,
  };
  return config.provider === 'anthropic' ? new AnthropicExtractor(opts) : new OpenAIExtractor(config.provider, opts);
}
