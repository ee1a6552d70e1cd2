import { z } from 'zod';
import { ConfigError } from '../errors';
import { envSchema, type Env } from './schema';

export interface EmbeddingConfig {
  provider: 'local' | 'openai' | 'openai-compatible';
  model: string;
  dimensions: number;
  baseUrl?: string;
  apiKey?: string;
  mode: 'inline' | 'deferred';
}

/** The resolved configuration: environment, then defaults, then derived values. */
export interface Config {
  neo4j: { uri: string; user: string; password: string; database: string; httpPort: number; heap: string; pageCache: string; startupTimeoutMs: number };
  postgres: { url: string; readUrl?: string; poolSize: number };
  redis: { url: string; clusterNodes?: Array<{ host: string; port: number }>; keyPrefix: string };
  embedding: EmbeddingConfig;
  llm: { openaiApiKey?: string; anthropicApiKey?: string };
  audit: { level: 'off' | 'writes' | 'reads' | 'verbose'; partitionDaysAhead: number; retentionDays: number; spoolDir: string };
  working: { ttlSeconds: number; maxTurns: number };
  migrateOnStart: boolean;
  dataDir: string;
  port: number;
  logLevel: Env['LOG_LEVEL'];
}

const EMBEDDING_DEFAULTS: Record<EmbeddingConfig['provider'], { model: string; dimensions: number }> = {
  local: { model: 'use-lite-512', dimensions: 512 },
  openai: { model: 'text-embedding-3-small', dimensions: 1536 },
  'openai-compatible': { model: 'text-embedding-3-small', dimensions: 1536 },
};

function describeOf(key: string): string {
  const field = (envSchema.shape as Record<string, z.ZodType>)[key];
  return field?.description ?? 'see config/mnemograph.env.example';
}

/**
 * Builds the configuration from an environment (pass `process.env` at the edge, a plain
 * object in tests). Throws ConfigError naming the first bad setting and how to fix it.
 * Empty strings count as unset so `FOO=` in an env file means "use the default".
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') input[key] = value.trim();
  }
  const parsed = envSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? 'config');
    const shown = key.includes('PASSWORD') || key.includes('KEY') ? '<hidden>' : JSON.stringify(input[key]);
    throw new ConfigError(key, `invalid value ${shown} (${issue.message})`, `set ${key} to ${describeOf(key)}`);
  }
  const e = parsed.data;

  const provider = e.EMBEDDING_PROVIDER;
  const defaults = EMBEDDING_DEFAULTS[provider];
  if (provider === 'openai' && !e.OPENAI_API_KEY) {
    throw new ConfigError('OPENAI_API_KEY', 'is required when EMBEDDING_PROVIDER=openai', 'set OPENAI_API_KEY or use EMBEDDING_PROVIDER=local');
  }
  if (provider === 'openai-compatible' && !e.EMBEDDING_BASE_URL) {
    throw new ConfigError('EMBEDDING_BASE_URL', 'is required when EMBEDDING_PROVIDER=openai-compatible', 'set it to the server base URL, e.g. http://127.0.0.1:8000/v1');
  }
  if (provider === 'local' && e.EMBEDDING_DIMENSIONS !== undefined && e.EMBEDDING_DIMENSIONS !== 512) {
    throw new ConfigError('EMBEDDING_DIMENSIONS', 'the local model produces 512-d vectors', 'unset EMBEDDING_DIMENSIONS or set it to 512');
  }

  return {
    neo4j: {
      uri: e.NEO4J_URI,
      user: e.NEO4J_USER,
      password: e.NEO4J_PASSWORD,
      database: e.NEO4J_DATABASE,
      httpPort: e.NEO4J_HTTP_PORT,
      heap: e.NEO4J_HEAP,
      pageCache: e.NEO4J_PAGECACHE,
      startupTimeoutMs: e.NEO4J_STARTUP_TIMEOUT_MS,
    },
    postgres: { url: e.DATABASE_URL, readUrl: e.DATABASE_READ_URL, poolSize: e.DATABASE_POOL_SIZE },
    redis: {
      url: e.REDIS_URL,
      clusterNodes: e.REDIS_CLUSTER_NODES?.split(',').map((hp) => {
        const i = hp.lastIndexOf(':');
        return { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) };
      }),
      keyPrefix: e.REDIS_KEY_PREFIX,
    },
    embedding: {
      provider,
      model: e.EMBEDDING_MODEL ?? defaults.model,
      dimensions: e.EMBEDDING_DIMENSIONS ?? defaults.dimensions,
      baseUrl: e.EMBEDDING_BASE_URL,
      apiKey: e.OPENAI_API_KEY,
      mode: e.EMBEDDING_MODE,
    },
    llm: { openaiApiKey: e.OPENAI_API_KEY, anthropicApiKey: e.ANTHROPIC_API_KEY },
    audit: {
      level: e.AUDIT_LEVEL,
      partitionDaysAhead: e.AUDIT_PARTITION_DAYS_AHEAD,
      retentionDays: e.AUDIT_RETENTION_DAYS,
      spoolDir: e.AUDIT_SPOOL_DIR,
    },
    working: { ttlSeconds: e.WORKING_MEMORY_TTL_SECONDS, maxTurns: e.WORKING_MEMORY_MAX_TURNS },
    migrateOnStart: e.MIGRATE_ON_START,
    dataDir: e.MNEMOGRAPH_DATA_DIR,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
  };
}

/** A copy of the configuration safe to log or snapshot into the audit log (no secrets). */
export function redactConfig(config: Config): Record<string, unknown> {
  return {
    ...config,
    neo4j: { ...config.neo4j, password: '<redacted>' },
    postgres: { ...config.postgres, url: redactUrl(config.postgres.url), readUrl: config.postgres.readUrl && redactUrl(config.postgres.readUrl) },
    redis: { ...config.redis, url: redactUrl(config.redis.url) },
    embedding: { ...config.embedding, apiKey: config.embedding.apiKey ? '<redacted>' : undefined },
    llm: { openaiApiKey: config.llm.openaiApiKey ? '<redacted>' : undefined, anthropicApiKey: config.llm.anthropicApiKey ? '<redacted>' : undefined },
  };
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:<redacted>@');
}

/** Parses `host:port` from a bolt:// or neo4j:// URI (the local stack needs the port). */
export function boltPort(uri: string): number {
  const m = /:(\d+)\/?$/.exec(uri.replace(/^[a-z+]+:\/\//, ''));
  return m ? Number(m[1]) : 7687;
}
