import type { Mnemograph } from '../src/container';
import { defaultLocomoPath, loadLocomo } from './recall-datasets';
import { percentiles } from './recall-metrics';
import type { ApiClient } from './lifetime-probe';
import { PER_CONVERSATION, syntheticTurns } from './recall-latency';

/**
 * Delete cost at scale: one user holding `turns` synthetic turns (conversations of 100; texts
 * drawn deterministically from LoCoMo, so their embeddings are real and come from the disk
 * cache: the year pass embedded them), then turn deletes and conversation deletes through
 * the HTTP API, timed one by one.
 */

const BATCH = 1_000;

async function storeSynthetic(m: Mnemograph, userId: string, turns: number): Promise<number> {
  const pool = loadLocomo(defaultLocomoPath()).conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns));
  const start = Date.parse('2024-01-01T00:00:00Z');
  const step = (365 * 86_400_000) / turns;
  const t0 = performance.now();
  for (let n = 0; n < turns; n += BATCH) await m.memory.storeTurns(syntheticTurns(pool, userId, n, Math.min(n + BATCH, turns), { start, step, source: 'bench-lifetime-scale' }));
  return (performance.now() - t0) / 1000;
}

/** Times `n` calls, each built from its position. */
async function timed(n: number, call: (i: number) => Promise<{ status: number; ms: number; text: string }>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await call(i);
    if (r.status !== 200) throw new Error(`delete at scale: ${r.status} ${r.text.slice(0, 200)}`);
    ms.push(r.ms);
  }
  return ms;
}

/**
 * For each size: stores the user's turns (internal id `internalUser(size)`), then deletes
 * `deletes` turns (index 50 of conversations spread over the user) and `deletes` whole
 * conversations (others), through the API as the tenant's key; `cleanup` removes the user.
 */
export async function runScale(
  m: Mnemograph,
  api: ApiClient,
  opts: {
    sizes: number[];
    deletes: number;
    internalUser: (size: number) => string;
    register: (userId: string) => Promise<void>;
    cleanup: (userId: string) => Promise<void>;
    /** Each size's figures as soon as they are measured. */
    onSize?: (size: number, figures: Record<string, unknown>) => void;
  },
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const size of opts.sizes) {
    const userId = opts.internalUser(size);
    const ext = api.external(userId);
    const ingestSeconds = await storeSynthetic(m, userId, size);
    await opts.register(ext);
    const conversations = Math.ceil(size / PER_CONVERSATION);
    const pick = (i: number, half: number) => `${ext}-c${Math.floor(((i + half) * conversations) / (2 * opts.deletes)) % conversations}`;
    const turnMs = await timed(opts.deletes, (i) => api.call('DELETE', `/v1/users/${ext}/conversations/${pick(2 * i, 0)}/turns/50`));
    const conversationMs = await timed(opts.deletes, (i) => api.call('DELETE', `/v1/users/${ext}/conversations/${pick(2 * i + 1, 0)}`));
    const figures = {
      turns: size,
      ingest_seconds: Math.round(ingestSeconds * 10) / 10,
      turn_delete_ms: { ...percentiles(turnMs), n: turnMs.length, samples: turnMs.map((x) => Math.round(x)) },
      conversation_delete_ms: { ...percentiles(conversationMs), n: conversationMs.length, turns_each: PER_CONVERSATION, samples: conversationMs.map((x) => Math.round(x)) },
    };
    out[String(size)] = figures;
    opts.onSize?.(size, figures);
    await opts.cleanup(userId);
  }
  return out;
}
