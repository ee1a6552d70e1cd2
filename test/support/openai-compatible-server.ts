import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';

/**
 * A local HTTP server that speaks the OpenAI embeddings wire format, so the real `openai`
 * SDK client runs end to end in tests. Vectors are deterministic (hash-seeded) unit vectors;
 * `failNext` makes the next N calls answer 500.
 */
export async function startOpenAICompatibleServer(dimensions: number): Promise<{ baseUrl: string; calls: number; failNext: (n: number) => void; close: () => Promise<void> }> {
  const app = express();
  app.use(express.json({ limit: '10mb' }));
  let fail = 0;
  const state = { calls: 0 };
  app.post('/v1/embeddings', (req, res) => {
    state.calls++;
    if (fail > 0) {
      fail--;
      res.status(500).json({ error: { message: 'injected failure', type: 'server_error' } });
      return;
    }
    const body = req.body as { input: string | string[]; model: string; dimensions?: number };
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const dims = body.dimensions ?? dimensions;
    res.json({
      object: 'list',
      model: body.model,
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, dims) })),
      usage: { prompt_tokens: inputs.join(' ').length, total_tokens: inputs.join(' ').length },
    });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get calls() {
      return state.calls;
    },
    failNext: (n) => (fail = n),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export function vectorFor(text: string, dims: number): number[] {
  const v: number[] = [];
  let seed = createHash('sha256').update(text).digest();
  while (v.length < dims) {
    for (let i = 0; i + 4 <= seed.length && v.length < dims; i += 4) v.push(seed.readInt32LE(i) / 2 ** 31);
    seed = createHash('sha256').update(seed).digest();
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / norm);
}
