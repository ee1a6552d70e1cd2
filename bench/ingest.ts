/**
 * Write-path benchmark (`npm run bench:ingest`), not a test. On the real local stack:
 *  - batched import (storeTurns, 500 per call) up to 10k and then 100k stored turns of one user,
 *    reporting turns/s before embedding;
 *  - single storeTurn calls (deferred embedding) at 10k and at 100k stored turns: p50/p95/p99;
 *  - embedding throughput: the raw embedder vs the background embedder on the same turns.
 * Writes bench/results/ingest.json. Removes its data at the end (and stale data of earlier runs).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { loadConfig } from '../src/config';
import { createMnemograph, type Mnemograph } from '../src/container';
import { createLogger } from '../src/infra/logger';
import type { TurnInput } from '../src/episodic';

const SINGLE_CALLS = Number(process.env.BENCH_SINGLE_CALLS ?? 1000);
const STAGES = (process.env.BENCH_STAGES ?? '10000,100000').split(',').map(Number);
const BATCH = 500;
const EMBED_SAMPLE = Number(process.env.BENCH_EMBED_SAMPLE ?? 1024);
const PREFIX = 'bench-ingest-';

const NAMES = ['Alice', 'Bob', 'Carmen', 'Dmitri', 'Emeka', 'Fatima', 'Giulia', 'Hiro', 'Ines', 'Jonas'];
const PLACES = ['Lisbon', 'Denver', 'Osaka', 'Nairobi', 'Oslo', 'Quito', 'Hanoi', 'Krakow'];
const THINGS = ['hiking', 'a pottery class', 'the quarterly report', 'a new espresso machine', 'the marathon', 'a job interview', 'guitar lessons', 'the garden'];

/** Varied, realistic-length conversation text (deterministic per i). */
function text(i: number): string {
  const n = NAMES[i % NAMES.length]!;
  const p = PLACES[(i * 7) % PLACES.length]!;
  const t = THINGS[(i * 3) % THINGS.length]!;
  return `${n} told me about ${t} in ${p} last week; we talked for a while about how it went and what to do next (note ${i}).`;
}

function turn(userId: string, i: number): TurnInput {
  return {
    userId,
    conversationId: `${userId}-c${Math.floor(i / 50)}`,
    index: i % 50,
    role: i % 2 ? 'assistant' : 'user',
    content: text(i),
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    metadata: { source: 'bench', speaker: NAMES[i % NAMES.length]! },
  };
}

function percentiles(samples: number[]): { p50: number; p95: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(2));
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), n: s.length };
}

async function cleanup(m: Mnemograph, pattern: string): Promise<void> {
  const tag = { subsystem: 'bench', op: 'cleanup' };
  for (;;) {
    const [row] = await m.neo4j.write<{ n: number }>(
      'MATCH (n) WHERE (n:Turn OR n:Conversation) AND n.user_id STARTS WITH $p WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n',
      { p: pattern },
      tag,
    );
    if (!row || row.n === 0) break;
  }
  await m.neo4j.write('MATCH (u:User) WHERE u.id STARTS WITH $p DETACH DELETE u', { p: pattern }, tag);
  await m.pg.primary.query('DELETE FROM conversation_logs WHERE user_id LIKE $1', [`${pattern}%`]);
  // The bench users' audit rows stay: deleting rows breaks the day's hash chain (sql/007) that `mnemograph audit verify` checks.
}

async function main(): Promise<void> {
  // A fresh stack gets its schema here, as `npm start` would.
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'deferred', MIGRATE_ON_START: 'true', LOG_LEVEL: 'warn' });
  const m = await createMnemograph(config, { log: createLogger('warn'), backgroundEmbedding: false });
  const userId = `${PREFIX}${Date.now()}`;
  const bar = new SingleBar({ format: '{phase} [{bar}] {value}/{total} {eta_formatted}' }, Presets.shades_classic);
  const result: Record<string, unknown> = { machine: { cores: 2, node: process.version }, embedding_mode: 'deferred', batch_size: BATCH, stages: {} };
  try {
    await cleanup(m, PREFIX);
    let stored = 0;
    for (const target of STAGES) {
      // Batched import up to the stage size.
      bar.start(target, stored, { phase: `import to ${target}` });
      const t0 = performance.now();
      const before = stored;
      while (stored < target) {
        const n = Math.min(BATCH, target - stored);
        await m.memory.storeTurns(Array.from({ length: n }, (_, k) => turn(userId, stored + k)));
        stored += n;
        bar.update(stored);
      }
      bar.stop();
      const importSeconds = (performance.now() - t0) / 1000;

      // Single-turn calls at this size (new conversations, so each call also creates a Conversation node half the time).
      const latencies: number[] = [];
      bar.start(SINGLE_CALLS, 0, { phase: `storeTurn at ${target}` });
      const s0 = performance.now();
      for (let k = 0; k < SINGLE_CALLS; k++) {
        const c0 = performance.now();
        await m.memory.storeTurn(turn(userId, stored));
        latencies.push(performance.now() - c0);
        stored++;
        bar.increment();
      }
      bar.stop();
      const singleSeconds = (performance.now() - s0) / 1000;
      (result.stages as Record<string, unknown>)[String(target)] = {
        stored_turns: target,
        store_turn_ms: percentiles(latencies),
        turns_per_second: {
          single: Number((SINGLE_CALLS / singleSeconds).toFixed(1)),
          batched_import: Number(((stored - SINGLE_CALLS - before) / importSeconds).toFixed(1)),
        },
      };
      console.log(JSON.stringify((result.stages as Record<string, unknown>)[String(target)]));
    }

    // Embedding: raw embedder throughput vs the background embedder on pending turns.
    const sample = Array.from({ length: EMBED_SAMPLE }, (_, i) => text(i + 7_000_000));
    await m.embedder.embed(['warm up'], { priority: 'interactive' });
    const r0 = performance.now();
    await Promise.all(Array.from({ length: Math.ceil(sample.length / 32) }, (_, b) => m.embedder.embed(sample.slice(b * 32, b * 32 + 32), { priority: 'background' })));
    const raw = sample.length / ((performance.now() - r0) / 1000);
    // Only this run's newest turns stay pending; older ones are marked done so the drain is bounded.
    await m.neo4j.write(
      `MATCH (t:Turn) WHERE t.user_id = $u AND t.embedding_pending = true
       WITH t ORDER BY t.timestamp DESC SKIP toInteger($keep) REMOVE t.embedding_pending`,
      { u: userId, keep: EMBED_SAMPLE },
      { subsystem: 'bench', op: 'trim-pending' },
    );
    const b0 = performance.now();
    const embedded = await m.backgroundEmbedder.drain();
    const background = embedded / ((performance.now() - b0) / 1000);
    result.embedding = {
      model: m.embedder.model,
      raw_texts_per_second: Number(raw.toFixed(1)),
      background_turns_per_second: Number(background.toFixed(1)),
      background_over_raw: Number((background / raw).toFixed(3)),
      background_turns: embedded,
    };
    console.log(JSON.stringify(result.embedding));
  } finally {
    bar.stop();
    await cleanup(m, PREFIX);
    await m.close();
  }
  mkdirSync(join(__dirname, 'results'), { recursive: true });
  writeFileSync(join(__dirname, 'results', 'ingest.json'), JSON.stringify({ generated_at: new Date().toISOString(), ...result }, null, 2) + '\n');
  console.log('wrote bench/results/ingest.json');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
