import { loadConfig, redactConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';

describe('loadConfig', () => {
  it('defaults point at the local stack', () => {
    const c = loadConfig({});
    expect(c.neo4j.uri).toBe('bolt://127.0.0.1:7687');
    expect(c.postgres.url).toBe('postgres://postgres@127.0.0.1:5432/mnemograph');
    expect(c.redis.url).toBe('redis://127.0.0.1:6379');
    expect(c.embedding).toMatchObject({ provider: 'local', model: 'e5-small-v2', dimensions: 384, mode: 'deferred' });
    expect(c.audit.level).toBe('writes');
    expect(c.working.ttlSeconds).toBe(3600);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ NEO4J_URI: '', AUDIT_LEVEL: '  ' }).neo4j.uri).toBe('bolt://127.0.0.1:7687');
  });

  it.each([
    ['NEO4J_URI', 'http://localhost:7687'],
    ['NEO4J_URI', 'bolt://'],
    ['NEO4J_PASSWORD', 'short'],
    ['DATABASE_URL', 'mysql://x'],
    ['AUDIT_LEVEL', 'everything'],
    ['PORT', 'eighty'],
    ['REDIS_CLUSTER_NODES', 'a,b'],
    ['NEO4J_VECTOR_MERGE_FACTOR', '1'],
  ])('rejects %s=%s with a one-line message naming the setting and the fix', (key, value) => {
    let err: unknown;
    try {
      loadConfig({ [key]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as ConfigError).message;
    expect(msg.startsWith(`${key}:`)).toBe(true);
    expect(msg).toContain('Fix:');
    expect(msg).not.toContain('\n');
    if (key === 'NEO4J_PASSWORD') expect(msg).not.toContain('short');
  });

  it('requires the pieces a provider needs', () => {
    expect(() => loadConfig({ EMBEDDING_PROVIDER: 'openai' })).toThrow(/OPENAI_API_KEY/);
    expect(() => loadConfig({ EMBEDDING_PROVIDER: 'openai-compatible' })).toThrow(/EMBEDDING_BASE_URL/);
    expect(() => loadConfig({ EMBEDDING_DIMENSIONS: '768' })).toThrow(/EMBEDDING_DIMENSIONS/);
    expect(loadConfig({ EMBEDDING_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' }).embedding).toMatchObject({ model: 'text-embedding-3-small', dimensions: 1536 });
  });

  it('takes a local model by name, with its dimension and calibrated vector threshold', () => {
    const lite = loadConfig({ EMBEDDING_MODEL: 'use-lite-512' });
    expect(lite.embedding).toMatchObject({ provider: 'local', model: 'use-lite-512', dimensions: 512 });
    expect(lite.recall.minVectorScore).toBe(0.66);
    expect(lite.recall.techniques.statementQuery).toBe(true);
    expect(loadConfig({}).recall.techniques.statementQuery).toBe(false);
    expect(loadConfig({ RECALL_STATEMENT_QUERY: 'true' }).recall.techniques.statementQuery).toBe(true);
    expect(loadConfig({}).recall.minVectorScore).toBe(0.875);
    expect(loadConfig({ EMBEDDING_MODEL: 'bge-small-en-v1.5' }).recall.minVectorScore).toBe(0.8);
    expect(loadConfig({ RECALL_MIN_VECTOR_SCORE: '0' }).recall.minVectorScore).toBe(0);
    // Entities: e5-small's own line; for other models, or when the fact line is set, the fact line.
    expect(loadConfig({}).recall.minEntityVectorScore).toBe(0.905);
    expect(loadConfig({ EMBEDDING_MODEL: 'bge-small-en-v1.5' }).recall.minEntityVectorScore).toBe(0.8);
    expect(loadConfig({ RECALL_MIN_VECTOR_SCORE: '0' }).recall.minEntityVectorScore).toBe(0);
    expect(loadConfig({ RECALL_MIN_ENTITY_VECTOR_SCORE: '0' }).recall.minEntityVectorScore).toBe(0);
    expect(loadConfig({}).semantic.entityMatchSimilarity).toBe(0.975);
    expect(loadConfig({}).worker.duplicateSimilarity).toBe(0.98);
    expect(lite.semantic.entityMatchSimilarity).toBe(0.92);
    expect(lite.worker.duplicateSimilarity).toBe(0.95);
    expect(loadConfig({ ENTITY_MATCH_SIMILARITY: '0.99', DUPLICATE_FACT_SIMILARITY: '0.97' })).toMatchObject({ semantic: { entityMatchSimilarity: 0.99 }, worker: { duplicateSimilarity: 0.97 } });
    expect(loadConfig({ EMBEDDING_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' })).toMatchObject({
      semantic: { entityMatchSimilarity: 0.92 },
      worker: { duplicateSimilarity: 0.95 },
      recall: { minVectorScore: 0.66 },
    });
    expect(() => loadConfig({ EMBEDDING_MODEL: 'bert-huge' })).toThrow(
      /^EMBEDDING_MODEL: unknown local embedding model "bert-huge".*Fix: choose one of bge-small-en-v1.5, e5-small-v2, all-minilm-l6-v2, use-lite-512/,
    );
    expect(() => loadConfig({ EMBEDDING_MODEL: 'use-lite-512', EMBEDDING_DIMENSIONS: '384' })).toThrow(/use-lite-512 produces 512-d/);
  });

  it('reads cluster settings and a read replica', () => {
    const c = loadConfig({ NEO4J_URI: 'neo4j+s://abc.databases.neo4j.io', REDIS_CLUSTER_NODES: 'r1:7000,r2:7001', DATABASE_READ_URL: 'postgres://u:p@replica/db' });
    expect(c.neo4j.uri).toBe('neo4j+s://abc.databases.neo4j.io');
    expect(c.redis.clusterNodes).toEqual([
      { host: 'r1', port: 7000 },
      { host: 'r2', port: 7001 },
    ]);
    expect(c.postgres.readUrl).toBe('postgres://u:p@replica/db');
  });

  it('configures the recall LLM only when asked, and needs a base URL for an openai-compatible one and a key for a hosted one', () => {
    expect(loadConfig({}).recallLlm).toBeUndefined();
    expect(loadConfig({ RECALL_LLM_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant-1' }).recallLlm).toEqual({
      provider: 'anthropic',
      // A model served today (claude-3-5-haiku-latest is retired).
      model: 'claude-haiku-4-5',
      baseUrl: undefined,
      apiKey: 'sk-ant-1',
      timeoutMs: 3000,
      maxRetries: 0,
    });
    expect(() => loadConfig({ RECALL_LLM_PROVIDER: 'openai-compatible' })).toThrow(/^RECALL_LLM_BASE_URL: is required when RECALL_LLM_PROVIDER=openai-compatible/);
    expect(loadConfig({ RECALL_LLM_PROVIDER: 'openai-compatible', RECALL_LLM_BASE_URL: 'http://127.0.0.1:8000/v1', RECALL_LLM_MODEL: 'qwen' }).recallLlm).toMatchObject({
      model: 'qwen',
      baseUrl: 'http://127.0.0.1:8000/v1',
    });
    expect(() => loadConfig({ RECALL_LLM_PROVIDER: 'openai' })).toThrow(/^OPENAI_API_KEY: is required when RECALL_LLM_PROVIDER=openai.*RECALL_LLM_PROVIDER=off/);
    expect(() => loadConfig({ RECALL_LLM_PROVIDER: 'anthropic', OPENAI_API_KEY: 'sk-1' })).toThrow(/^ANTHROPIC_API_KEY: is required when RECALL_LLM_PROVIDER=anthropic/);
    expect(() => loadConfig({ EXTRACTION_PROVIDER: 'anthropic' })).toThrow(/^ANTHROPIC_API_KEY: is required when EXTRACTION_PROVIDER=anthropic.*EXTRACTION_PROVIDER=rules/);
  });

  it('sends the extraction schema as structured output unless switched off, with a served Anthropic model by default', () => {
    expect(loadConfig({ EXTRACTION_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant-1' }).extraction).toMatchObject({ model: 'claude-haiku-4-5', structuredOutput: true });
    expect(loadConfig({ EXTRACTION_PROVIDER: 'openai-compatible', EXTRACTION_BASE_URL: 'http://127.0.0.1:8000/v1', EXTRACTION_STRUCTURED_OUTPUT: 'false' }).extraction.structuredOutput).toBe(false);
    expect(() => loadConfig({ EXTRACTION_STRUCTURED_OUTPUT: 'sometimes' })).toThrow(/EXTRACTION_STRUCTURED_OUTPUT/);
  });

  it('redacts secrets for snapshots', () => {
    const c = loadConfig({ NEO4J_PASSWORD: 'supersecret', DATABASE_URL: 'postgres://u:hunter22@h/db', OPENAI_API_KEY: 'sk-1', RECALL_LLM_PROVIDER: 'openai' });
    const text = JSON.stringify(redactConfig(c));
    expect(text).not.toMatch(/supersecret|hunter22|sk-1/);
  });
});
