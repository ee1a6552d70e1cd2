import type { ChatModel, LlmUsage } from './contract';

/**
 * USD per million tokens (input, output) for the models we know, so every LLM call is
 * costed. Unknown models (a local server) cost 0 unless EXTRACTION_PRICE_* overrides are set.
 * Prices as published by the vendors in 2025; override them through configuration.
 */
const PRICES: Record<string, { input: number; output: number }> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'claude-3-5-haiku-latest': { input: 0.8, output: 4 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
};

export interface PriceOverride {
  inputPerMTok?: number;
  outputPerMTok?: number;
}

export function costUsd(model: string, inputTokens: number, outputTokens: number, override: PriceOverride = {}): number {
  const known = PRICES[model] ?? Object.entries(PRICES).find(([k]) => model.startsWith(k))?.[1];
  const input = override.inputPerMTok ?? known?.input ?? 0;
  const output = override.outputPerMTok ?? known?.output ?? 0;
  return (inputTokens * input + outputTokens * output) / 1_000_000;
}

/** The usage record of one call to `chat` (tokens as the API reported them, priced). */
export function usageOf(chat: Pick<ChatModel, 'provider' | 'model'>, inputTokens: number, outputTokens: number, latencyMs: number, price?: PriceOverride): LlmUsage {
  return { provider: chat.provider, model: chat.model, inputTokens, outputTokens, costUsd: costUsd(chat.model, inputTokens, outputTokens, price), latencyMs };
}
