import { AnthropicChatModel, OpenAIChatModel } from './chat-models';
import type { ChatModel, ChatModelOptions } from './contract';

export * from './contract';
export { AnthropicChatModel, OpenAIChatModel, isReasoningModel } from './chat-models';
export { PgUsageSink } from './pg-usage-sink';
export { costUsd, usageOf, type PriceOverride } from './pricing';

/** The chat model for the options' provider (called by the composition root). */
export function createChatModel(opts: ChatModelOptions): ChatModel {
  return opts.provider === 'anthropic' ? new AnthropicChatModel(opts) : new OpenAIChatModel({ ...opts, provider: opts.provider });
}
