import { OpenAIEmbedder } from '../../src/embedding/openai-embedder';
import { LocalEmbedder } from '../../src/embedding/local-embedder';
import { startOpenAICompatibleServer, vectorFor } from '../support/openai-compatible-server';

const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('local embedder (USE-lite, offline)', () => {
  const e = new LocalEmbedder(1);
  afterAll(() => e.close());

  it('gives 512-d unit vectors that put paraphrases close and unrelated text apart', async () => {
    const [a, b, c] = await e.embed(['I moved to Berlin last year', 'Last year I relocated to Berlin', 'The recipe needs two eggs']);
    expect(a).toHaveLength(512);
    expect(Math.abs(cos(a!, a!) - 1)).toBeLessThan(1e-3);
    expect(cos(a!, b!)).toBeGreaterThan(0.7);
    expect(cos(a!, c!)).toBeLessThan(0.4);
  });

  it('embeds blank text without throwing', async () => {
    const [v] = await e.embed(['   ']);
    expect(v).toHaveLength(512);
  });
});

describe('openai-compatible embedder through the real openai SDK', () => {
  let server: Awaited<ReturnType<typeof startOpenAICompatibleServer>>;
  beforeAll(async () => {
    server = await startOpenAICompatibleServer(1536);
  });
  afterAll(() => server.close());

  it('returns vectors in input order with the configured dimension', async () => {
    const e = new OpenAIEmbedder('openai-compatible', 'text-embedding-3-small', 1536, { baseUrl: server.baseUrl, maxRetries: 0 });
    const vs = await e.embed(['alpha', 'beta']);
    expect(vs).toEqual([vectorFor('alpha', 1536), vectorFor('beta', 1536)]);
  });

  it('refuses vectors of the wrong dimension with the setting to fix', async () => {
    const e = new OpenAIEmbedder('openai-compatible', 'my-model', 768, { baseUrl: server.baseUrl, maxRetries: 0 });
    await expect(e.embed(['x'])).rejects.toThrow(/expected 768-d \(fix EMBEDDING_DIMENSIONS\)/);
  });

  it('retries a server error through the SDK, and surfaces it when it persists', async () => {
    const e = new OpenAIEmbedder('openai-compatible', 'text-embedding-3-small', 1536, { baseUrl: server.baseUrl, maxRetries: 1 });
    server.failNext(1);
    await expect(e.embed(['once'])).resolves.toHaveLength(1);
    server.failNext(5);
    await expect(e.embed(['twice'])).rejects.toMatchObject({ code: 'EMBEDDING_FAILED' });
    server.failNext(0);
  });
});
