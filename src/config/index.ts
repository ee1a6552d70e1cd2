export { loadConfig, redactConfig, boltPort, type Config, type EmbeddingConfig } from './load-config';
export { envSchema } from './schema';
