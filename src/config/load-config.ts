import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_LOCAL_MODEL, localModel } from '../embedding/local-models';
import type { RecallSettings } from '../retrieval/contract';
import { ConfigError } from '../errors';
import type { ChatModelOptions, LlmProvider } from '../llm/contract';
import { envSchema, type Env } from './schema';

export interface EmbeddingConfig {
  provider: 'local' | 'openai' | 'openai-compatible';
  model: string;
  dimensions: number;
  baseUrl?: string;
  apiKey?: string;
  mode: 'inline' | 'deferred';
  /** Where local model files are kept (downloaded once). */
  modelDir: string;
  /** The Maven repository local ONNX models are fetched from. */
  mavenUrl: string;
}

/** The model an LLM setting uses when its *_MODEL is unset (extraction and the recall LLM alike). */
const DEFAULT_LLM_MODEL: Record<LlmProvider, string> = { openai: 'gpt-4o-mini', 'openai-compatible': 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

function llmApiKey(e: Env, provider: string): string | undefined {
  return provider === 'anthropic' ? e.ANTHROPIC_API_KEY : e.OPENAI_API_KEY;
}

/**
 * What an LLM provider needs before its first call: OpenAI and Anthropic their API key; an
 * openai-compatible server has no default endpoint, so `<prefix>_BASE_URL` must name it.
 * `offline` is the setting that needs no LLM.
 */
function requireLlm(e: Env, prefix: 'EXTRACTION' | 'RECALL_LLM', provider: string, baseUrl: string | undefined, offline: string): void {
  if (provider === 'openai-compatible' && !baseUrl) {
    throw new ConfigError(`${prefix}_BASE_URL`, `is required when ${prefix}_PROVIDER=openai-compatible`, 'set it to the server base URL, e.g. http://127.0.0.1:8000/v1');
  }
  if ((provider === 'openai' || provider === 'anthropic') && !llmApiKey(e, provider)) {
    const key = provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    throw new ConfigError(key, `is required when ${prefix}_PROVIDER=${provider}`, `set ${key} or use ${prefix}_PROVIDER=${offline}`);
  }
}

/** The resolved configuration: environment, then defaults, then derived values. */
export interface Config {
  neo4j: { uri: string; user: string; password: string; database: string; httpPort: number; heap: string; pageCache: string; vectorMergeFactor: number; startupTimeoutMs: number };
  postgres: { url: string; readUrl?: string; poolSize: number };
  redis: { url: string; clusterNodes?: Array<{ host: string; port: number }>; keyPrefix: string };
  embedding: EmbeddingConfig;
  llm: { openaiApiKey?: string; anthropicApiKey?: string };
  /** A cross-encoder behind a rerank API, used when RECALL_RERANK is on. */
  rerank: { url?: string; model: string; apiKey?: string; timeoutMs: number };
  /** The LLM behind HyDE and LLM query expansion; absent when RECALL_LLM_PROVIDER=off. */
  recallLlm?: ChatModelOptions;
  audit: { level: 'off' | 'writes' | 'reads' | 'verbose'; partitionDaysAhead: number; retentionDays: number; spoolDir: string };
  erasure: { graceMs: number };
  working: { ttlSeconds: number; maxTurns: number };
  /** Recall techniques and weights (see src/retrieval). */
  recall: RecallSettings;
  migrateOnStart: boolean;
  dataDir: string;
  port: number;
  /** How long a stopping service waits for requests and jobs before closing connections and exiting. */
  shutdownTimeoutMs: number;
  api: { host: string; rateLimitPerMinute: number; authFailuresPerMinute: number; bodyLimit: string; keyCacheSeconds: number; keyOutageGraceSeconds: number };
  extraction: {
    provider: 'rules' | 'openai' | 'anthropic' | 'openai-compatible';
    model: string;
    baseUrl?: string;
    apiKey?: string;
    timeoutMs: number;
    maxOutputTokens: number;
    /** Send the answer's schema as structured output (OpenAI json_schema strict, Anthropic tool use). */
    structuredOutput: boolean;
    windowTurns: number;
    priceInputPerMTok?: number;
    priceOutputPerMTok?: number;
    contradictionPolicy: 'prefer_new' | 'prefer_old' | 'flag_review';
  };
  worker: {
    jobs: string[];
    lockTtlMs: number;
    batchSize: number;
    promotion: { minConfidence: number; minAccessCount: number; minConversations: number };
    decayRate: number;
    inferredDecayRate: number;
    archiveDays: number;
    /** The operator's retention rule: conversations idle this many days are deleted (undefined: never). */
    deleteDays: number | undefined;
    duplicateSimilarity: number;
    /** Reads at which the short_term job promotes an entry to a long-term fact. */
    shortTermMinAccess: number;
  };
  /** Memory pools' maintenance (the pools job). */
  pools: { duplicateCosine: number; staleThreshold: number; staleHalfLifeDays: number };
  /** Similarity thresholds of the semantic layer (calibrated per local model). */
  semantic: { entityMatchSimilarity: number };
  logLevel: Env['LOG_LEVEL'];
}

const REMOTE_EMBEDDING_DEFAULTS: Record<'openai' | 'openai-compatible', { model: string; dimensions: number }> = {
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
  // A local model also sets recall and semantic defaults that depend on how it spreads its vectors.
  const local = provider === 'local' ? localModel(e.EMBEDDING_MODEL ?? DEFAULT_LOCAL_MODEL) : undefined;
  const defaults = local ? { model: local.id, dimensions: local.dimensions } : REMOTE_EMBEDDING_DEFAULTS[provider as 'openai' | 'openai-compatible'];
  const minVectorScore = e.RECALL_MIN_VECTOR_SCORE ?? local?.minVectorScore ?? 0.66;
  if (provider === 'openai' && !e.OPENAI_API_KEY) {
    throw new ConfigError('OPENAI_API_KEY', 'is required when EMBEDDING_PROVIDER=openai', 'set OPENAI_API_KEY or use EMBEDDING_PROVIDER=local');
  }
  if (provider === 'openai-compatible' && !e.EMBEDDING_BASE_URL) {
    throw new ConfigError('EMBEDDING_BASE_URL', 'is required when EMBEDDING_PROVIDER=openai-compatible', 'set it to the server base URL, e.g. http://127.0.0.1:8000/v1');
  }
  if (local && e.EMBEDDING_DIMENSIONS !== undefined && e.EMBEDDING_DIMENSIONS !== local.dimensions) {
    throw new ConfigError('EMBEDDING_DIMENSIONS', `the local model ${defaults.model} produces ${defaults.dimensions}-d vectors`, `unset EMBEDDING_DIMENSIONS or set it to ${defaults.dimensions}`);
  }

  requireLlm(e, 'RECALL_LLM', e.RECALL_LLM_PROVIDER, e.RECALL_LLM_BASE_URL, 'off');
  requireLlm(e, 'EXTRACTION', e.EXTRACTION_PROVIDER, e.EXTRACTION_BASE_URL, 'rules');
  const jobs = ['consolidate', 'patterns', 'decay', 'cleanup', 'promote', 'audit_partitions', 'pools', 'short_term'];
  const unknownJob = e.WORKER_JOBS.split(',').find((j) => !jobs.includes(j));
  if (unknownJob) {
    throw new ConfigError('WORKER_JOBS', `unknown job "${unknownJob}"`, `use a comma-separated subset of ${jobs.join(',')}`);
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
      vectorMergeFactor: e.NEO4J_VECTOR_MERGE_FACTOR,
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
      modelDir: e.EMBEDDING_MODEL_DIR ?? join(homedir(), '.cache', 'mnemograph', 'models'),
      mavenUrl: e.MAVEN_REPOSITORY_URL,
    },
    llm: { openaiApiKey: e.OPENAI_API_KEY, anthropicApiKey: e.ANTHROPIC_API_KEY },
    rerank: { url: e.RERANK_URL, model: e.RERANK_MODEL, apiKey: e.RERANK_API_KEY, timeoutMs: e.RERANK_TIMEOUT_MS },
    recallLlm:
      e.RECALL_LLM_PROVIDER === 'off'
        ? undefined
        : {
            provider: e.RECALL_LLM_PROVIDER,
            model: e.RECALL_LLM_MODEL ?? DEFAULT_LLM_MODEL[e.RECALL_LLM_PROVIDER],
            baseUrl: e.RECALL_LLM_BASE_URL,
            apiKey: llmApiKey(e, e.RECALL_LLM_PROVIDER),
            timeoutMs: e.RECALL_LLM_TIMEOUT_MS,
            // On the read path: one try within the timeout, then the offline path.
            maxRetries: 0,
          },
    audit: {
      level: e.AUDIT_LEVEL,
      partitionDaysAhead: e.AUDIT_PARTITION_DAYS_AHEAD,
      retentionDays: e.AUDIT_RETENTION_DAYS,
      spoolDir: e.AUDIT_SPOOL_DIR,
    },
    erasure: { graceMs: e.ERASURE_GRACE_MS },
    working: { ttlSeconds: e.WORKING_MEMORY_TTL_SECONDS, maxTurns: e.WORKING_MEMORY_MAX_TURNS },
    recall: {
      techniques: {
        fulltext: e.RECALL_FULLTEXT,
        vector: e.RECALL_VECTOR,
        neighbours: e.RECALL_NEIGHBOURS,
        speakerBoost: e.RECALL_SPEAKER_BOOST > 1,
        timeAnswerBoost: e.RECALL_TIME_ANSWER_BOOST > 1,
        recency: e.RECALL_RECENCY,
        selfQuery: e.RECALL_SELF_QUERY,
        selfQueryLlm: e.RECALL_SELF_QUERY_LLM,
        diversityCap: e.RECALL_DIVERSITY_CAP,
        queryExpansion: e.RECALL_QUERY_EXPANSION,
        hyde: e.RECALL_HYDE,
        statementQuery: e.RECALL_STATEMENT_QUERY ?? local?.statementQuery ?? false,
        rerank: e.RECALL_RERANK,
      },
      weights: {
        episodic: 0.3,
        facts: 0.25,
        entities: 0.2,
        procedural: 0.15,
        recency: 0.1,
        ...Object.fromEntries(e.RECALL_WEIGHTS.split(',').map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])])),
      },
      fusion: e.RECALL_FUSION,
      rrfK: e.RECALL_RRF_K,
      vectorWeight: e.RECALL_VECTOR_WEIGHT,
      minVectorScore,
      minEntityVectorScore: e.RECALL_MIN_ENTITY_VECTOR_SCORE ?? e.RECALL_MIN_VECTOR_SCORE ?? local?.minEntityVectorScore ?? minVectorScore,
      neighbourWeight: e.RECALL_NEIGHBOUR_WEIGHT,
      neighbourWindow: e.RECALL_NEIGHBOUR_WINDOW,
      neighbourBackward: e.RECALL_NEIGHBOUR_BACKWARD,
      chatNeighbourWeight: e.RECALL_CHAT_NEIGHBOUR_WEIGHT,
      questionWeight: e.RECALL_QUESTION_WEIGHT,
      answerBoost: e.RECALL_ANSWER_BOOST,
      speakerBoost: e.RECALL_SPEAKER_BOOST,
      timeAnswerBoost: e.RECALL_TIME_ANSWER_BOOST,
      timeHintBoost: e.RECALL_TIME_HINT_BOOST,
      recencyHalfLifeDays: e.RECALL_RECENCY_HALF_LIFE_DAYS,
      candidates: e.RECALL_CANDIDATES,
      rerankDepth: e.RECALL_RERANK_DEPTH,
      entityDepth: e.RECALL_ENTITY_DEPTH,
    },
    migrateOnStart: e.MIGRATE_ON_START,
    dataDir: e.MNEMOGRAPH_DATA_DIR,
    port: e.PORT,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    api: {
      host: e.API_HOST,
      rateLimitPerMinute: e.API_RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: e.API_AUTH_FAILURES_PER_MINUTE,
      bodyLimit: e.API_BODY_LIMIT.toLowerCase() + 'b',
      keyCacheSeconds: e.API_KEY_CACHE_SECONDS,
      keyOutageGraceSeconds: e.API_KEY_OUTAGE_GRACE_SECONDS,
    },
    extraction: {
      provider: e.EXTRACTION_PROVIDER,
      model: e.EXTRACTION_MODEL ?? (e.EXTRACTION_PROVIDER === 'rules' ? 'rules-v1' : DEFAULT_LLM_MODEL[e.EXTRACTION_PROVIDER]),
      baseUrl: e.EXTRACTION_BASE_URL,
      apiKey: llmApiKey(e, e.EXTRACTION_PROVIDER),
      timeoutMs: e.EXTRACTION_TIMEOUT_MS,
      maxOutputTokens: e.EXTRACTION_MAX_OUTPUT_TOKENS,
      structuredOutput: e.EXTRACTION_STRUCTURED_OUTPUT,
      windowTurns: e.EXTRACTION_WINDOW_TURNS,
      priceInputPerMTok: e.EXTRACTION_PRICE_INPUT_PER_MTOK,
      priceOutputPerMTok: e.EXTRACTION_PRICE_OUTPUT_PER_MTOK,
      contradictionPolicy: e.CONTRADICTION_POLICY,
    },
    worker: {
      jobs: e.WORKER_JOBS.split(','),
      lockTtlMs: e.WORKER_LOCK_TTL_MS,
      batchSize: e.WORKER_BATCH_SIZE,
      promotion: { minConfidence: e.PROMOTION_MIN_CONFIDENCE, minAccessCount: e.PROMOTION_MIN_ACCESS_COUNT, minConversations: e.PROMOTION_MIN_CONVERSATIONS },
      decayRate: e.DECAY_RATE,
      inferredDecayRate: e.INFERRED_DECAY_RATE,
      archiveDays: e.RETENTION_ARCHIVE_DAYS,
      deleteDays: e.RETENTION_DELETE_DAYS,
      duplicateSimilarity: e.DUPLICATE_FACT_SIMILARITY ?? local?.duplicateFactSimilarity ?? 0.95,
      shortTermMinAccess: e.SHORT_TERM_PROMOTE_MIN_ACCESS,
    },
    pools: { duplicateCosine: e.POOL_DUPLICATE_SIMILARITY, staleThreshold: e.POOL_STALE_THRESHOLD, staleHalfLifeDays: e.POOL_STALE_HALF_LIFE_DAYS },
    semantic: { entityMatchSimilarity: e.ENTITY_MATCH_SIMILARITY ?? local?.entityMatchSimilarity ?? 0.92 },
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
    rerank: { ...config.rerank, apiKey: config.rerank.apiKey ? '<redacted>' : undefined },
    recallLlm: config.recallLlm && { ...config.recallLlm, apiKey: config.recallLlm.apiKey ? '<redacted>' : undefined },
    extraction: { ...config.extraction, apiKey: config.extraction.apiKey ? '<redacted>' : undefined },
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
