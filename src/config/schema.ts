import { z } from 'zod';

/**
 * Every setting Mnemograph reads, keyed by its environment variable, with its default and
 * a description that doubles as the fix shown when the value is invalid. Defaults point at
 * the local stack that `npm run stack:up` brings up.
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const neo4jUri = z
  .string()
  .regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\/[^\s/:]+(:\d{1,5})?\/?$/, 'must look like bolt://host:7687 or neo4j://host:7687');

const pgUrl = z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must look like postgres://user@host:5432/database');
const redisUrl = z.string().regex(/^rediss?:\/\/\S+$/, 'must look like redis://host:6379');
const memorySize = z.string().regex(/^\d+[kmg]$/i, 'must be a size such as 512m or 1g');

export const envSchema = z.object({
  NEO4J_URI: neo4jUri.default('bolt://127.0.0.1:7687').describe(
    'Neo4j Bolt URI; use neo4j:// (routing) for a cluster or Aura, bolt:// for a single server',
  ),
  NEO4J_USER: z.string().min(1).default('neo4j').describe('Neo4j user name'),
  NEO4J_PASSWORD: z.string().min(8).default('mnemograph-dev').describe('Neo4j password, at least 8 characters'),
  NEO4J_DATABASE: z
    .string()
    .regex(/^[a-z][a-z0-9.-]{2,62}$/, 'must be a Neo4j database name (lowercase, 3-63 chars)')
    .default('neo4j')
    .describe('Neo4j database; Community Edition has one user database, "neo4j"'),
  NEO4J_HTTP_PORT: int(1, 65535).default(7474).describe('HTTP port of the local Neo4j (Neo4j Browser)'),
  NEO4J_HEAP: memorySize.default('1g').describe('JVM heap of the local Neo4j'),
  NEO4J_PAGECACHE: memorySize.default('256m').describe('page cache of the local Neo4j'),
  NEO4J_STARTUP_TIMEOUT_MS: int(1000, 600000).default(120000).describe('how long stack:up waits for Neo4j'),

  DATABASE_URL: pgUrl
    .default('postgres://postgres@127.0.0.1:5432/mnemograph')
    .describe('PostgreSQL URL for the turn log, invocation log, profiles and audit log'),
  DATABASE_READ_URL: pgUrl.optional().describe('optional PostgreSQL read replica URL for analytical reads'),
  DATABASE_POOL_SIZE: int(1, 200).default(10).describe('PostgreSQL pool size'),

  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379').describe('Redis URL for working memory and locks'),
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'must be a comma-separated list of host:port')
    .optional()
    .describe('Redis Cluster seed nodes (host:port,host:port); when set, REDIS_URL is ignored'),
  REDIS_KEY_PREFIX: z.string().default('').describe('prefix for every Redis key (namespacing)'),

  EMBEDDING_PROVIDER: z
    .enum(['local', 'openai', 'openai-compatible'])
    .default('local')
    .describe('local (offline USE-lite, 512-d), openai, or openai-compatible'),
  EMBEDDING_MODEL: z.string().min(1).optional().describe('embedding model id (default per provider)'),
  EMBEDDING_DIMENSIONS: int(8, 8192).optional().describe('embedding dimension (default per provider)'),
  EMBEDDING_BASE_URL: z.url().optional().describe('base URL of an OpenAI-compatible embedding server'),
  EMBEDDING_MODE: z
    .enum(['inline', 'deferred'])
    .default('deferred')
    .describe('inline: embed before storeTurn returns; deferred: a background embedder catches up'),
  OPENAI_API_KEY: z.string().min(1).optional().describe('OpenAI API key'),
  ANTHROPIC_API_KEY: z.string().min(1).optional().describe('Anthropic API key'),

  AUDIT_LEVEL: z.enum(['off', 'writes', 'reads', 'verbose']).default('writes').describe('audit log level'),
  AUDIT_PARTITION_DAYS_AHEAD: int(1, 365).default(7).describe('daily audit partitions created ahead of today'),
  AUDIT_RETENTION_DAYS: int(1, 36500).default(365).describe('audit partitions older than this are dropped'),
  AUDIT_SPOOL_DIR: z.string().default('.mnemograph/audit-spool').describe('where audit rows wait while Postgres is down'),

  WORKING_MEMORY_TTL_SECONDS: int(1, 30 * 86400).default(3600).describe('TTL of working-memory keys'),
  WORKING_MEMORY_MAX_TURNS: int(1, 10000).default(50).describe('recent turns kept per session'),

  MIGRATE_ON_START: bool.default(false).describe('run migrations when the service starts'),
  MNEMOGRAPH_DATA_DIR: z.string().default('.mnemograph').describe('where the local stack keeps Neo4j data and logs'),
  PORT: int(0, 65535).default(8080).describe('HTTP port of the API'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('log level'),
});

export type EnvInput = z.input<typeof envSchema>;
export type Env = z.output<typeof envSchema>;
