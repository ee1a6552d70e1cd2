/**
 * The hot path while the service is busy (issue #22): storeTurn and remember p50/p95 with
 * `--clients` concurrent callers (70% remember, 30% storeTurn), first on a quiet service,
 * then while a bulk import of `--import-turns` turns of another user is stored and embedded
 * by the background embedder and the worker's consolidate job runs in a loop. Both phases in
 * one run, same user, same clients, `--seconds` each. In-process calls of the facade (the
 * API's own cost is not in these figures). Writes bench/results/load.json.
 *
 *   npm run bench:load -- --clients 8 --seconds 20 --import-turns 20000
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../src/config';
import { createMnemograph, type Mnemograph } from '../src/container';
import { PACKAGE_ROOT as ROOT } from '../src/package-info';
import { defaultLocomoPath, loadLocomo } from './recall-datasets';
import { percentiles } from './recall-metrics';
import { deleteUsers } from './recall-cleanup';

interface Options {
  clients: string;
  seconds: string;
  seedTurns: string;
  importTurns: string;
  out?: string;
}

interface Phase {
  remember_ms: { p50: number; p95: number };
  store_turn_ms: { p50: number; p95: number };
  remember_calls: number;
  store_turn_calls: number;
  errors: number;
  calls_per_second: number;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--clients <n>', 'concurrent callers', '8')
    .option('--seconds <n>', 'length of each phase', '20')
    .option('--seed-turns <n>', 'turns of the measured user, stored and embedded before the quiet phase', '2000')
    .option('--import-turns <n>', 'turns of the bulk import during the busy phase', '20000')
    .option('--out <file>', 'result file', join(ROOT, 'bench/results/load.json'))
    .parse()
    .opts<Options>();
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'deferred', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const m = await createMnemograph(config);
  const run = Date.now().toString(36);
  const userId = `bench-load-${run}`;
  const importUser = `bench-load-import-${run}`;
  const texts = loadLocomo(defaultLocomoPath()).conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => ({ content: t.content, speaker: t.speaker }))));
  const questions = loadLocomo(defaultLocomoPath()).questions.map((q) => q.question);
  try {
    const seeded = await seed(m, userId, texts, Number(opts.seedTurns));
    console.log(`seeded ${seeded} turns; embedding them`);
    await m.backgroundEmbedder.drain();
    const clients = Number(opts.clients);
    const ms = Number(opts.seconds) * 1000;

    console.log(`quiet: ${clients} clients for ${opts.seconds} s`);
    const quiet = await phase(m, userId, texts, questions, clients, ms);

    console.log(`busy: the same, while ${opts.importTurns} turns are imported and embedded and consolidate runs`);
    const busy = { stop: false, imported: 0, consolidateRuns: 0 };
    const importing = bulkImport(m, importUser, texts, Number(opts.importTurns), busy);
    const consolidating = (async () => {
      while (!busy.stop) {
        await m.memory.runJob('consolidate').catch(() => undefined);
        busy.consolidateRuns++;
      }
    })();
    const pendingBefore = await pending(m);
    const loaded = await phase(m, userId, texts, questions, clients, ms);
    const pendingAfter = await pending(m);
    busy.stop = true;
    await Promise.all([importing, consolidating]);

    const result = {
      clients,
      phase_seconds: Number(opts.seconds),
      seeded_turns: seeded,
      quiet,
      under_load: { ...loaded, imported_turns: busy.imported, consolidate_runs: busy.consolidateRuns, pending_embeddings: { at_start: pendingBefore, at_end: pendingAfter } },
      budgets_ms: { remember_p95: 50, store_turn_p95: 25 },
      machine: { cpus: (await import('node:os')).cpus().length, embedding_model: config.embedding.model },
      note: 'in-process facade calls (no HTTP); 70% remember (topK 10, default techniques, each query embedded) / 30% storeTurn; the busy phase imports in batches of 500 (deferred embedding: the background embedder embeds them) and runs the consolidate job in a loop',
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync(dirname(opts.out!), { recursive: true });
    writeFileSync(opts.out!, JSON.stringify(result, null, 2) + '\n');
  } finally {
    await deleteUsers(m, [userId, importUser]).catch(() => undefined);
    await m.close();
  }
}

// -> {n}: turns waiting for their embedding
const PENDING = 'MATCH (t:Turn) WHERE t.embedding_pending = true RETURN count(t) AS n';
async function pending(m: Mnemograph): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(PENDING, {}, { subsystem: 'bench', op: 'pending' }))[0]?.n ?? 0;
}

async function seed(m: Mnemograph, userId: string, texts: Array<{ content: string; speaker: string }>, n: number): Promise<number> {
  for (let i = 0; i < n; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const t = texts[(j * 7_919) % texts.length]!;
      batch.push({ userId, conversationId: `${userId}-c${Math.floor(j / 100)}`, role: 'user' as const, content: t.content, metadata: { speaker: t.speaker } });
    }
    await m.memory.storeTurns(batch);
  }
  return n;
}

async function bulkImport(m: Mnemograph, userId: string, texts: Array<{ content: string; speaker: string }>, n: number, state: { stop: boolean; imported: number }): Promise<void> {
  for (let i = 0; i < n && !state.stop; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const t = texts[(j * 104_729) % texts.length]!;
      batch.push({ userId, conversationId: `${userId}-c${Math.floor(j / 100)}`, role: 'user' as const, content: t.content, metadata: { speaker: t.speaker } });
    }
    await m.memory.storeTurns(batch);
    state.imported += batch.length;
  }
}

/** `clients` loops of 70% remember / 30% storeTurn for `ms`; latencies per operation. */
async function phase(m: Mnemograph, userId: string, texts: Array<{ content: string; speaker: string }>, questions: string[], clients: number, ms: number): Promise<Phase> {
  const remember: number[] = [];
  const store: number[] = [];
  let errors = 0;
  const until = Date.now() + ms;
  const client = async (c: number) => {
    const conversationId = `${userId}-live-${c}-${Date.now()}`;
    for (let i = 0; Date.now() < until; i++) {
      const write = (i * 7 + c) % 10 < 3;
      const t0 = performance.now();
      try {
        if (write) await m.memory.storeTurn({ userId, conversationId, role: 'user', content: texts[(i * 31 + c) % texts.length]!.content });
        else await m.memory.remember({ userId, query: questions[(i * 17 + c) % questions.length]!, topK: 10 });
        (write ? store : remember).push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  const seconds = (Date.now() - t0) / 1000;
  return {
    remember_ms: percentiles(remember),
    store_turn_ms: percentiles(store),
    remember_calls: remember.length,
    store_turn_calls: store.length,
    errors,
    calls_per_second: Math.round(((remember.length + store.length) / seconds) * 10) / 10,
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
