export { loadConfig, redactConfig, boltPort, type Config, type EmbeddingConfig } from './load-config';
export { envSchema } from './schema';
export { applyEnvFile, envFilePath, parseEnvFile, DEFAULT_ENV_FILE } from './env-file';
