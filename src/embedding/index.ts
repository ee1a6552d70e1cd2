import type { EmbeddingConfig } from '../config';
import type { Embedder } from './contract';
import { LocalEmbedder } from './local-embedder';
import { localModel } from './local-models';
import { OpenAIEmbedder } from './openai-embedder';

export type { Embedder, EmbedOptions } from './contract';
export { ensureModelFiles, localModel } from './local-models';

/** Builds the configured embedder (called by the composition root only). */
export function createEmbedder(config: EmbeddingConfig): Embedder {
  if (config.provider === 'local') return new LocalEmbedder(localModel(config.model), { modelDir: config.modelDir, mavenUrl: config.mavenUrl });
  return new OpenAIEmbedder(config.provider, config.model, config.dimensions, { apiKey: config.apiKey, baseUrl: config.baseUrl });
}
