/**
 * Recall benchmark on real data (not a test): `npm run bench:recall -- --format locomo
 * --dataset ../shared/data/locomo10.json`. Ingests the dataset through storeTurns (one user
 * per conversation, one Mnemograph conversation per session, sessions in order, each turn
 * with its speaker and session timestamp), asks every question through remember() with
 * three systems side by side on the same stored data (hybrid = our default recall, bm25 =
 * full-text only, vector = vector only), and writes bench/results/recall-<dataset>.json.
 *
 * `--format latency --turns 100000` instead measures remember() at scale for one user,
 * next to a bare Neo4j vector query and a bare full-text query on the same data.
 *
 * Embeddings come from the configured embedder through an on-disk cache (bench/cache),
 * keyed by the text's sha256: reruns skip the slow offline model, results are unchanged.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import cliProgress from 'cli-progress';
import { applyEnvFile, loadConfig } from '../src/config';
import { createMnemograph, type Mnemograph } from '../src/container';
import { createEmbedder } from '../src/embedding';
import type { Techniques } from '../src/retrieval';
import { CachingEmbedder } from './recall-embedding-cache';
import { loadLocomo, loadLongMemEval, type BenchDataset, defaultLocomoPath } from './recall-datasets';
import { askedAt, ingestDataset, RunIds } from './recall-ingest';
import { average, percentiles, publishedSessionRecall, scoreFacts, scoreQuestion, type QuestionScores } from './recall-metrics';
import { deleteUsers } from './recall-cleanup';
import { runLatency } from './recall-latency';
import { Neo4jUserGraph } from '../src/tenancy';

const ROOT = resolve(__dirname, '..');

/** What both baselines switch off: every technique but their one search. */
const BASELINE: Techniques = {
  neighbours: false,
  speakerBoost: false,
  timeAnswerBoost: false,
  recency: false,
  selfQuery: 'off',
  diversityCap: 0,
  queryExpansion: 'off',
  hyde: false,
  statementQuery: false,
  rerank: false,
};

/** The three systems; baselines switch every other technique off. */
export const SYSTEMS: Record<string, Techniques> = {
  hybrid: {},
  bm25: { ...BASELINE, vector: false },
  vector: { ...BASELINE, fulltext: false },
};

interface Options {
  format: 'locomo' | 'longmemeval' | 'latency';
  underLoad: string;
  dataset?: string;
  systems: string;
  depth: string;
  limit?: string;
  keep?: boolean;
  reuse?: string;
  repeat: string;
  out?: string;
  turns: string;
  queries: string;
  poolEntries: string;
  knowledge?: boolean;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--format <format>', 'locomo | longmemeval | latency', 'locomo')
    .option('--dataset <file>', 'dataset file (default: LoCoMo, see defaultLocomoPath)')
    .option('--systems <list>', 'systems to run', 'hybrid,bm25,vector')
    .option('--depth <n>', 'turns asked of remember() per question (sessions are ranked from these)', '50')
    .option('--limit <n>', 'only the first n questions (quick runs)')
    .option('--keep', 'keep the ingested users instead of deleting them afterwards')
    .option('--reuse <run>', 'ask the questions of users an earlier --keep run left (its setup.run id) instead of ingesting; keeps them')
    .option('--knowledge', 'consolidate the users first (the configured extractor learns facts and entities), then also score the recalled facts by the turns they were learned from')
    .option('--repeat <n>', 'ask every question n times (more latency samples; recall figures are from the first round)', '1')
    .option('--out <file>', 'result file (default bench/results/recall-<dataset>.json)')
    .option('--turns <n>', 'latency: stored turns for the one user', '100000')
    .option('--queries <n>', 'latency: queries measured', '300')
    .option(
      '--under-load <turns>',
      'latency: also measure remember and storeTurn while a bulk import of this many turns embeds in the background and the worker consolidates, beside the quiet figures (0: off)',
      '0',
    )
    .option('--pool-entries <n>', 'latency: entries in 3 memory pools an agent reads; remember() is then measured for that agent too, beside the pool-free figure (0: off)', '0')
    .parse()
    .opts<Options>();

  // The stack config/mnemograph.env (or MNEMOGRAPH_ENV_FILE) names, as `mnemograph` commands read it;
  // a fresh stack gets its schema here, as `npm start` would.
  applyEnvFile(process.env);
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'inline', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const embedder = new CachingEmbedder(
    createEmbedder(config.embedding),
    process.env.BENCH_EMBEDDING_CACHE ?? join(ROOT, 'bench/cache', `embeddings-${config.embedding.provider}-${config.embedding.model}.bin`),
  );
  const m = await createMnemograph(config, { embedder, backgroundEmbedding: false });
  try {
    if (opts.format === 'latency') {
      const poolEntries = Number(opts.poolEntries);
      const result = await runLatency(m, embedder, { turns: Number(opts.turns), queries: Number(opts.queries), keep: opts.keep === true, poolEntries, underLoad: Number(opts.underLoad) });
      write(opts.out ?? join(ROOT, poolEntries > 0 ? 'bench/results/recall-latency-pools.json' : 'bench/results/recall-latency.json'), result);
      return;
    }
    const dataset = opts.format === 'locomo' ? loadLocomo(opts.dataset ? resolve(opts.dataset) : defaultLocomoPath()) : loadLongMemEval(resolve(opts.dataset!));
    const result = await runRecall(m, dataset, {
      systems: opts.systems.split(',').map((s) => s.trim()),
      depth: Number(opts.depth),
      limit: opts.limit ? Number(opts.limit) : undefined,
      keep: opts.keep === true || opts.reuse !== undefined,
      reuse: opts.reuse,
      repeat: Number(opts.repeat),
      knowledge: opts.knowledge === true,
    });
    result.embedding_cache = { hits: embedder.hits, misses: embedder.misses };
    write(opts.out ?? join(ROOT, `bench/results/recall-${dataset.name}.json`), result);
    printTable(result);
  } finally {
    await m.close();
    await embedder.close();
  }
}

interface RecallResult {
  dataset: string;
  systems: Record<string, { overall: Record<string, unknown>; by_category: Record<string, Record<string, number>> }>;
  published_protocol?: Record<string, { session_recall_at_10: number; n: number }>;
  setup: Record<string, unknown>;
  embedding_cache?: { hits: number; misses: number };
}

export async function runRecall(
  m: Mnemograph,
  ds: BenchDataset,
  opts: { systems: string[]; depth: number; limit?: number; keep: boolean; reuse?: string; repeat?: number; quiet?: boolean; knowledge?: boolean },
): Promise<RecallResult> {
  const run = opts.reuse ?? `rb${Date.now().toString(36)}`;
  const ids = new RunIds(run);
  const userOf = (convKey: string) => ids.user(convKey);
  const bars = opts.quiet
    ? undefined
    : new cliProgress.MultiBar({ format: '{stage} |{bar}| {value}/{total} {eta_formatted}', hideCursor: true, noTTYOutput: true, notTTYSchedule: 5_000 }, cliProgress.Presets.shades_classic);

  const totalTurns = ds.conversations.reduce((n, c) => n + c.sessions.reduce((k, s) => k + s.turns.length, 0), 0);
  const ingestBar = bars?.create(totalTurns, 0, { stage: 'ingest ' });
  const t0 = performance.now();
  if (!opts.reuse) await ingestDataset(m, ds, ids, (n) => ingestBar?.increment(n));
  const ingestSeconds = (performance.now() - t0) / 1000;
  const knowledge = opts.knowledge
    ? await learnKnowledge(
        m,
        ds.conversations.map((c) => userOf(c.key)),
        run,
      )
    : undefined;

  const askedAtOf = askedAt(ds);
  const questions = ds.questions.slice(0, opts.limit ?? ds.questions.length);
  const queryBar = bars?.create(questions.length * opts.systems.length * Math.max(1, opts.repeat ?? 1), 0, { stage: 'recall ' });
  const perSystem = new Map<string, { scores: Array<{ cat: string; s: QuestionScores }>; published: number[]; ms: number[] }>();
  for (const name of opts.systems) perSystem.set(name, { scores: [], published: [], ms: [] });
  const rounds = Math.max(1, opts.repeat ?? 1);
  for (const [round, q] of Array.from({ length: rounds }, (_, r) => questions.map((q) => [r, q] as const)).flat()) {
    const asOf = askedAtOf(q);
    for (const name of opts.systems) {
      const techniques = SYSTEMS[name];
      if (!techniques) throw new Error(`unknown system ${name}; use ${Object.keys(SYSTEMS).join(', ')}`);
      const start = performance.now();
      const bundle = await m.memory.remember({ userId: userOf(q.conversationKey), query: q.question, topK: opts.depth, asOf, techniques });
      const ms = performance.now() - start;
      const ranked = bundle.turns.map((t) => ids.keyOf(t.turn));
      const acc = perSystem.get(name)!;
      acc.ms.push(ms);
      queryBar?.increment();
      if (round > 0) continue; // later rounds add latency samples only
      if (q.scored) {
        const facts = knowledge
          ? scoreFacts(
              bundle.facts.map((f) => knowledge.turnKeys.get(String(f.data?.sourceTurnId))),
              q.goldTurns,
            )
          : {};
        acc.scores.push({ cat: q.category, s: { ...scoreQuestion(ranked, q.goldTurns, q.goldSessions), ...facts } });
      }
      if (q.publishedGoldSessions) acc.published.push(publishedSessionRecall(ranked, q.publishedGoldSessions));
    }
  }
  bars?.stop();

  const result: RecallResult = { dataset: ds.name, systems: {}, setup: {} };
  for (const [name, acc] of perSystem) {
    const byCat = new Map<string, QuestionScores[]>();
    for (const { cat, s } of acc.scores) byCat.set(cat, [...(byCat.get(cat) ?? []), s]);
    result.systems[name] = {
      overall: { ...average(acc.scores.map((x) => x.s)), remember_ms: percentiles(acc.ms) },
      by_category: Object.fromEntries([...byCat].sort(([a], [b]) => a.localeCompare(b)).map(([cat, s]) => [cat, average(s)])),
    };
    if (ds.name === 'locomo') {
      result.published_protocol ??= {};
      result.published_protocol[name] = { session_recall_at_10: Math.round((acc.published.reduce((a, b) => a + b, 0) / Math.max(1, acc.published.length)) * 10_000) / 10_000, n: acc.published.length };
    }
  }
  result.setup = {
    conversations: ds.conversations.length,
    turns: totalTurns,
    questions_asked: questions.length,
    depth: opts.depth,
    ingest_seconds: opts.reuse ? null : Math.round(ingestSeconds * 10) / 10,
    rounds: Math.max(1, opts.repeat ?? 1),
    knowledge: knowledge?.learned,
    recall_settings: m.config.recall,
    embedding: `${m.embedder.provider}/${m.embedder.model}`,
    run,
  };
  await m.reinforcer.flush();
  if (!opts.keep)
    await deleteUsers(
      m,
      ds.conversations.map((c) => userOf(c.key)),
    );
  return result;
}

/**
 * Consolidates the run's users with the configured extractor (the worker's consolidate job),
 * then maps every turn id of theirs to its dataset key, so that a recalled fact is scored by
 * the turn it was learned from.
 */
async function learnKnowledge(m: Mnemograph, userIds: string[], run: string): Promise<{ turnKeys: Map<string, string>; learned: Record<string, unknown> }> {
  const t0 = performance.now();
  const job = await m.memory.consolidate({ userIds });
  const counts = [...(await new Neo4jUserGraph(m.neo4j).nodeCounts(userIds)).values()];
  const total = (label: string) => counts.reduce((n, c) => n + (c[label] ?? 0), 0);
  const rows = await m.neo4j.read<{ id: string; conversationId: string; index: number }>(
    'MATCH (t:Turn) WHERE t.user_id IN $userIds RETURN t.id AS id, t.conversation_id AS conversationId, t.index AS index',
    { userIds },
    { subsystem: 'bench', op: 'turnKeys' },
  );
  return {
    turnKeys: new Map(rows.map((r) => [r.id, new RunIds(run).keyOf(r)])),
    learned: { status: job.status, seconds: Math.round((performance.now() - t0) / 100) / 10, facts: total('Fact'), entities: total('Entity'), extractor: m.extractor.model },
  };
}

function write(file: string, result: unknown): void {
  mkdirSync(resolve(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

function printTable(r: RecallResult): void {
  const cols = [
    'turn_recall_at_5',
    'turn_recall_at_10',
    'hit_at_10',
    'ndcg_at_10',
    'mrr',
    'session_recall_at_10',
    'session_any_at_5',
    'session_any_at_10',
    'fact_hit_at_10',
    'fact_evidence_recall_at_10',
  ];
  const rows: string[] = [`| system | scope | n | ${cols.join(' | ')} |`, `|${' --- |'.repeat(cols.length + 3)}`];
  for (const [name, s] of Object.entries(r.systems)) {
    const line = (scope: string, m: Record<string, unknown>) => `| ${name} | ${scope} | ${String(m.n)} | ${cols.map((c) => (typeof m[c] === 'number' ? m[c].toFixed(3) : '-')).join(' | ')} |`;
    rows.push(line('overall', s.overall));
    for (const [cat, m] of Object.entries(s.by_category)) rows.push(line(`cat ${cat}`, m));
  }
  console.log(rows.join('\n'));
  for (const [name, s] of Object.entries(r.systems)) console.log(`${name}: remember_ms ${JSON.stringify(s.overall.remember_ms)}`);
  if (r.published_protocol) console.log(`published_protocol session_recall_at_10: ${JSON.stringify(r.published_protocol)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    // A progress bar stopped midway keeps its timer; exit rather than hang.
    process.exit(1);
  });
}
