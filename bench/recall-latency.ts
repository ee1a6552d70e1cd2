import cliProgress from 'cli-progress';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createMnemograph, type Mnemograph } from '../src/container';
import { luceneTerms } from '../src/infra/fulltext-scope';
import { keywords } from '../src/retrieval';
import type { CachingEmbedder } from './recall-embedding-cache';
import { defaultLocomoPath, loadLocomo, type BenchTurn } from './recall-datasets';
import { percentiles } from './recall-metrics';
import { deleteUsers } from './recall-cleanup';
import { keyPrincipal } from '../src/access';
import { PACKAGE_ROOT } from '../src/package-info';
import { neo4jPaths, readPid } from '../src/stack/neo4j-process';
import { MS_PER_TICK, processTicks, threadTicks } from './proc-cpu';
import { jvmGcMeter, mainThreadGc, pauseSummary, pausesInCalls, type Span } from './pauses';

export const PER_CONVERSATION = 100;
const BATCH = 1_000;

/**
 * Turns `from`..`to`-1 of a synthetic user: conversations of PER_CONVERSATION turns, texts
 * drawn deterministically from `pool` (LoCoMo's turns, whose embeddings the disk cache holds),
 * timestamps `step` ms apart from `start`.
 */
export function syntheticTurns(pool: BenchTurn[], userId: string, from: number, to: number, at: { start: number; step: number; source: string }) {
  return Array.from({ length: Math.max(0, to - from) }, (_, k) => {
    const i = from + k;
    const t = pool[(i * 7_919) % pool.length]!;
    return {
      userId,
      conversationId: `${userId}-c${Math.floor(i / PER_CONVERSATION)}`,
      index: i % PER_CONVERSATION,
      role: t.role,
      content: t.content,
      timestamp: new Date(at.start + i * at.step).toISOString(),
      metadata: { speaker: t.speaker, source: at.source },
    };
  });
}

// Bare index queries, for comparison with remember(): what Neo4j alone costs.
// $k, $embedding -> {id, score}: the vector index, no filtering at all
const BARE_VECTOR = `CALL db.index.vector.queryNodes('turn_embeddings', toInteger($k), $embedding) YIELD node, score RETURN node.id AS id, score`;
// $query, $k -> {id, score}: the full-text index, no owner clause
const BARE_FULLTEXT = `CALL db.index.fulltext.queryNodes('turn_content_fulltext', $query, {limit: toInteger($k)}) YIELD node, score RETURN node.id AS id, score`;
// $userId -> {n}
const COUNT_TURNS = `MATCH (t:Turn) WHERE t.user_id = $userId RETURN count(t) AS n`;

/** Nanoseconds (perf_hooks histograms) to milliseconds, one decimal. */
const ms = (ns: number) => Math.round(ns / 1e5) / 10;

/** remember()'s stage timings (`bundle.timings`) over many calls, and their p50/p95 per stage. */
class StageTimings {
  private readonly ms: Record<string, number[]> = {};
  add(timings: Record<string, number>): void {
    for (const [stage, ms] of Object.entries(timings)) (this.ms[stage] ??= []).push(ms);
  }
  percentiles(): Record<string, ReturnType<typeof percentiles>> {
    return Object.fromEntries(Object.entries(this.ms).map(([stage, ms]) => [stage, percentiles(ms)]));
  }
}

/**
 * remember() latency with `turns` stored turns for one user. The turns are generated: their
 * texts are drawn (deterministically) from the LoCoMo corpus, whose embeddings are already
 * in the disk cache, so every stored vector is the real embedding of its text but no new
 * text has to be embedded at ingest. Texts therefore repeat
 * (~17 copies each at 100k); queries are LoCoMo questions.
 */
export async function runLatency(
  m: Mnemograph,
  embedder: CachingEmbedder,
  opts: { turns: number; queries: number; keep: boolean; poolEntries?: number; underLoad?: number },
): Promise<Record<string, unknown>> {
  const ds = loadLocomo(defaultLocomoPath());
  const pool = ds.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns));
  const userId = `bench-latency-${opts.turns}`;
  const tag = { subsystem: 'bench', op: 'latency' };
  const bar = new cliProgress.SingleBar({ format: '{stage} |{bar}| {value}/{total} {eta_formatted}', hideCursor: true, noTTYOutput: true, notTTYSchedule: 5_000 }, cliProgress.Presets.shades_classic);

  const have = await storedTurns(m, userId);
  const start = Date.parse('2024-01-01T00:00:00Z');
  const step = (365 * 86_400_000) / opts.turns;
  const t0 = performance.now();
  bar.start(opts.turns, have, { stage: 'ingest' });
  // Conversations are filled in order, so the stored count says where to resume.
  for (let n = have - (have % PER_CONVERSATION); n < opts.turns; n += BATCH) {
    await m.memory.storeTurns(syntheticTurns(pool, userId, n, Math.min(n + BATCH, opts.turns), { start, step, source: 'bench-latency' }));
    bar.update(Math.min(n + BATCH, opts.turns));
  }
  bar.stop();
  const ingestSeconds = (performance.now() - t0) / 1000;
  const stored = await storedTurns(m, userId);

  const questions = ds.questions.slice(0, opts.queries).map((q) => q.question);
  const embeddings = await embedder.embed(questions);
  const measure = async (name: string, fn: (i: number, warmUp: boolean) => Promise<unknown>) => {
    for (let i = 0; i < Math.min(20, questions.length); i++) await fn(i, true);
    const ms: number[] = [];
    bar.start(questions.length, 0, { stage: name.padEnd(8) });
    for (let i = 0; i < questions.length; i++) {
      const s = performance.now();
      await fn(i, false);
      ms.push(performance.now() - s);
      bar.increment();
    }
    bar.stop();
    return percentiles(ms);
  };
  // remember() with the default techniques, as served: every query is embedded by the
  // configured model (the cache is bypassed).
  // Stages of the measured calls only; the first call's (cold: the user's speakers are read
  // then) are reported apart.
  const stages = new StageTimings();
  let firstCall: Record<string, number> | undefined;
  embedder.bypass = true;
  const remember = await measure('remember', async (i, warmUp) => {
    const bundle = await m.memory.remember({ userId, query: questions[i]!, topK: 10 });
    firstCall ??= bundle.timings;
    if (!warmUp) stages.add(bundle.timings);
  });
  // With --pool-entries: the same questions for the same user, asked by an agent that reads 3
  // pools holding that many entries in all (LoCoMo texts, so their vectors come from the cache).
  let agentRemember: ReturnType<typeof percentiles> | undefined;
  const agentStages = new StageTimings();
  let poolHits = 0;
  const poolIds: string[] = [];
  if ((opts.poolEntries ?? 0) > 0) {
    embedder.bypass = false;
    const owner = m.memory.as(keyPrincipal(null, null, 'bench-pool-owner')).pools;
    const per = Math.ceil(opts.poolEntries! / 3);
    for (let p = 0; p < 3; p++) {
      const poolId = `bench-pool-${opts.poolEntries}-${p}`;
      poolIds.push(poolId);
      const { created } = await owner.createPool({ poolId, name: `bench ${p}`, access: { read: ['bench-agent'], write: [], publicRead: false } });
      if (!created) continue; // filled by an earlier run kept with --keep
      bar.start(per, 0, { stage: `pool ${p}  ` });
      for (let i = 0; i < per; i += 50) {
        const texts = Array.from({ length: Math.min(50, per - i) }, (_, j) => pool[((p * per + i + j) * 104_729) % pool.length]!.content);
        const vectors = await embedder.embed(texts);
        await Promise.all(texts.map((content, j) => owner.addEntry({ poolId, content, kind: 'observation', embedding: vectors[j] })));
        bar.update(Math.min(i + 50, per));
      }
      bar.stop();
    }
    embedder.bypass = true;
    const agent = m.memory.as(keyPrincipal(null, null, 'bench-agent'));
    agentRemember = await measure('agent   ', async (i, warmUp) => {
      const bundle = await agent.remember({ userId, query: questions[i]!, topK: 10 });
      if (!warmUp) {
        poolHits += bundle.pools.length;
        agentStages.add(bundle.timings);
      }
    });
  }
  embedder.bypass = false;
  // With --under-load: remember and storeTurn as served, first quiet, then while a bulk import
  // of that many turns is embedded in the background and the worker consolidates, same run.
  const underLoad = (opts.underLoad ?? 0) > 0 ? await hotPathUnderLoad(m, embedder, userId, questions, pool, opts.underLoad!) : undefined;
  const bareVector = await measure('vector', (i) => m.neo4j.read(BARE_VECTOR, { k: 10, embedding: embeddings[i] }, tag));
  const bareFulltext = await measure('fulltext', (i) => m.neo4j.read(BARE_FULLTEXT, { k: 10, query: luceneTerms(keywords(questions[i]!).map((term) => ({ term }))) || 'nothing' }, tag));

  const result = {
    dataset: 'latency',
    stored_turns_for_user: stored,
    queries: questions.length,
    remember_ms: remember,
    first_remember_stage_ms: firstCall,
    remember_stage_ms: stages.percentiles(),
    bare_vector_query_ms: bareVector,
    bare_fulltext_query_ms: bareFulltext,
    ingest_seconds: Math.round(ingestSeconds * 10) / 10,
    ...(agentRemember
      ? {
          pool_entries: opts.poolEntries,
          pools_read_by_agent: 3,
          agent_remember_ms: agentRemember,
          agent_remember_stage_ms: agentStages.percentiles(),
          agent_pool_items_per_query: Math.round((poolHits / questions.length) * 10) / 10,
          pool_note: 'remember_ms: no agent (no pools, as before); agent_remember_ms: the same questions by an agent key that reads 3 pools; same run, same load',
        }
      : {}),
    ...(underLoad ? { under_load: underLoad } : {}),
    note: 'remember_ms includes embedding each query with the configured model (remember_stage_ms.embed); topK 10, default techniques',
  };
  console.log(JSON.stringify(result, null, 2));
  await m.reinforcer.flush();
  if (!opts.keep) {
    await deleteUsers(m, [userId]);
    for (const poolId of poolIds) await m.memory.pools.deletePool(poolId);
  }
  return result;
}

/**
 * remember() and storeTurn() p50/p95, one caller, alternating, `questions.length` of each:
 * first on a quiet service, then while a second facade over the same stores and the same
 * embedder (as one service process has) imports `importTurns` turns of another user with
 * deferred embedding (its background embedder embeds them at background priority) and runs
 * the consolidate job in a loop, and again once the import is stored while its backlog embeds
 * (`busy_embedding`). storeTurn goes through that second facade, which embeds
 * in the background as the service does (deferred), so it measures the write path as served.
 * Queries and stored turns are embedded for real (no cache).
 */
async function hotPathUnderLoad(
  m: Mnemograph,
  embedder: CachingEmbedder,
  userId: string,
  questions: string[],
  pool: Array<{ content: string; speaker: string; role: 'user' | 'assistant' }>,
  importTurns: number,
): Promise<Record<string, unknown>> {
  const conversationId = `${userId}-live-${Date.now().toString(36)}`;
  let written = 0;
  // storeTurn as the service serves it: deferred embedding (the bench's own facade embeds inline).
  let served: Mnemograph = m;
  // `until`: stop early once it holds (the busy phase measures only while the import still writes).
  const neo4jPid = readPid(neo4jPaths(PACKAGE_ROOT, m.config));
  const measure = async (label: string, until: () => boolean = () => false) => {
    // jstat first: it starts a JVM (~0.3 s, the event loop blocked), which the CPU meter's window must not hold.
    const neo4jGc = jvmGcMeter(neo4jPid);
    const cpu = cpuMeter(neo4jPid);
    const gc = mainThreadGc();
    const remember: Span[] = [];
    const store: Span[] = [];
    const stages = new StageTimings();
    // How long the event loop was held (this process: the import's and consolidate's own work
    // runs here too); a callback that is ready waits at least this long.
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    for (let i = 0; i < questions.length && !until(); i++) {
      let start = performance.now();
      const bundle = await m.memory.remember({ userId, query: questions[i]!, topK: 10 });
      remember.push({ start, ms: performance.now() - start });
      stages.add(bundle.timings);
      start = performance.now();
      await served.memory.storeTurn({ userId, conversationId, role: 'user', content: `${pool[(written++ * 31) % pool.length]!.content} (${label})` });
      store.push({ start, ms: performance.now() - start });
    }
    loop.disable();
    const cores = cpu();
    const pauses = gc();
    const neo4jPauses = neo4jGc();
    return {
      remember_ms: percentiles(remember.map((c) => c.ms)),
      store_turn_ms: percentiles(store.map((c) => c.ms)),
      samples: remember.length,
      // Which stage of remember grows under load (the stages run concurrently, see remember_stage_ms).
      remember_stage_ms: stages.percentiles(),
      event_loop_delay_ms: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
      // Cores busy on average: this process (both facades, the embedder's threads, the rules
      // thread) and the embedded Neo4j, with its JIT compiler threads apart.
      cpu_cores: cores,
      // Garbage collection while measured: this process's main thread (V8) and, when jstat can
      // tell, Neo4j's JVM (every collection stops its queries); and how often V8's pauses fell
      // inside the slowest calls against the faster half (docs/recall-tuning.md, session 27).
      gc_pauses: { process: pauseSummary(pauses), ...(neo4jPauses ? { neo4j: neo4jPauses } : {}) },
      gc_in_calls: { remember: pausesInCalls(remember, pauses), store_turn: pausesInCalls(store, pauses) },
    };
  };
  embedder.bypass = true;
  const importUser = `${userId}-import-${Date.now().toString(36)}`;
  const busy = { stop: false, imported: 0, written: false, consolidateRuns: 0 };
  const background = await createMnemograph({ ...m.config, embedding: { ...m.config.embedding, mode: 'deferred' } }, { embedder, log: m.log, gate: m.gate });
  served = background;
  try {
    // The measured user's knowledge is learned first, so quiet recalls run the same sources as
    // busy ones (consolidation below would otherwise learn it while the busy phases measure).
    const learned = await background.memory.consolidate({ userIds: [userId] });
    for (let i = 0; i < 20; i++) await m.memory.remember({ userId, query: questions[i % questions.length]!, topK: 10 });
    const quiet = await measure('quiet');
    const importing = (async () => {
      for (let i = 0; i < importTurns && !busy.stop; i += 500) {
        const batch = [];
        for (let j = i; j < Math.min(importTurns, i + 500); j++) {
          const t = pool[(j * 104_729) % pool.length]!;
          batch.push({ userId: importUser, conversationId: `${importUser}-c${Math.floor(j / 100)}`, role: t.role, content: `${t.content} #${j}`, metadata: { speaker: t.speaker } });
        }
        await background.memory.storeTurns(batch);
        busy.imported += batch.length;
      }
      busy.written = true;
    })();
    const consolidating = (async () => {
      while (!busy.stop) {
        await background.memory.runJob('consolidate').catch(() => undefined);
        busy.consolidateRuns++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Wait for the backlog to build before measuring.
    while (busy.imported < Math.min(importTurns, 1_000)) await new Promise((r) => setTimeout(r, 100));
    const pendingAtStart = await pendingEmbeddings(m);
    // What the import wrote while measured: the price of the gate's yielding.
    const importedAtStart = await storedTurns(m, importUser);
    const importStarted = performance.now();
    const consolidatedAtStart = await consolidatedTurns(m);
    const loaded = await measure('under load', () => busy.written);
    const loadedSeconds = (performance.now() - importStarted) / 1000;
    const importTurnsPerS = ((await storedTurns(m, importUser)) - importedAtStart) / loadedSeconds;
    // What consolidation got through meanwhile (its conversations' checkpoints): the price of its yielding.
    const consolidatedPerS = ((await consolidatedTurns(m)) - consolidatedAtStart) / loadedSeconds;
    const pendingAtEnd = await pendingEmbeddings(m);
    // Then the import's turns are all stored and only their embedding (and consolidate) goes on.
    await importing;
    const embeddedBefore = background.backgroundEmbedder.embedded;
    const pendingWhileEmbedding = await pendingEmbeddings(m);
    const embedding = await measure('while embedding');
    const embeddedWhileEmbedding = background.backgroundEmbedder.embedded - embeddedBefore;
    busy.stop = true;
    await consolidating;
    return {
      quiet,
      busy: { ...loaded, import_turns_per_s: Math.round(importTurnsPerS), consolidated_turns_per_s: Math.round(consolidatedPerS * 10) / 10 },
      busy_embedding: { ...embedding, embeddings_pending_at_start: pendingWhileEmbedding, embedded_while_measured: embeddedWhileEmbedding },
      import_turns_stored: busy.imported,
      embeddings_pending: { at_start: pendingAtStart, at_end: pendingAtEnd },
      background_embedded_while_measured: embeddedBefore,
      consolidate_runs: busy.consolidateRuns,
      measured_user_consolidated_first: { status: learned.status, stats: learned.stats, seconds: Math.round(learned.durationMs / 100) / 10 },
      budgets_ms: { remember_p95: 50, store_turn_p95: 25 },
      note: 'the measured user consolidated first (its facts and entities learned, so every phase recalls from the same sources); one caller alternating remember (topK 10) and storeTurn (deferred embedding, as served: the text is embedded in the background), each text embedded for real; the busy phase imports turns of another user in batches of 500 with deferred embedding (embedded by the background embedder at background priority on the same embedder) and runs consolidate in a loop, and measures only while the import still writes (samples: how many pairs); busy_embedding is measured once the import is stored, while its backlog embeds and consolidate still loops',
    };
  } finally {
    busy.stop = true;
    embedder.bypass = false;
    await background.close();
    await deleteUsers(m, [importUser]).catch(() => undefined);
  }
}

async function storedTurns(m: Mnemograph, userId: string): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(COUNT_TURNS, { userId }, { subsystem: 'bench', op: 'countTurns' }))[0]?.n ?? 0;
}

// -> {n}: the turns consolidation has got through, every user's (each conversation's checkpoint)
const CONSOLIDATED = 'MATCH (c:Conversation) RETURN sum(coalesce(c.consolidated_through, -1) + 1) AS n';
async function consolidatedTurns(m: Mnemograph): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(CONSOLIDATED, {}, { subsystem: 'bench', op: 'consolidated' }))[0]?.n ?? 0;
}

// -> {n}: turns waiting for their embedding
const PENDING = 'MATCH (t:Turn) WHERE t.embedding_pending = true RETURN count(t) AS n';
async function pendingEmbeddings(m: Mnemograph): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(PENDING, {}, { subsystem: 'bench', op: 'pending' }))[0]?.n ?? 0;
}

/** HotSpot's JIT compiler threads (`C1 CompilerThread0`, `C2 CompilerThread0`, … as /proc truncates them). */
const JIT_THREADS = /CompilerThre/;

/** Starts measuring; the returned function gives the cores used since, on average (Linux /proc; Neo4j's only when it is the stack's own). */
function cpuMeter(neo4jPid: number | undefined): () => Record<string, number> {
  const read = () => ({
    process: processTicks(process.pid),
    ...(neo4jPid ? { neo4j: processTicks(neo4jPid), neo4j_jit: threadTicks(neo4jPid, JIT_THREADS) } : {}),
  });
  const t0 = performance.now();
  const before: Record<string, number> = read();
  return () => {
    const elapsed = performance.now() - t0;
    return Object.fromEntries(Object.entries(read()).map(([k, v]) => [k, Math.round(((v - before[k]!) * MS_PER_TICK * 100) / elapsed) / 100]));
  };
}
