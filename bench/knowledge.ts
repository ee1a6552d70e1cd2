/**
 * Knowledge quality: what the service learns about people from what they say, on the
 * labelled dialogues of bench/data/knowledge-cases.json, through the real write path.
 *
 * For each extractor (the offline rules extractor, and the configured LLM extractor when
 * EXTRACTION_PROVIDER names one), every case becomes its own user: its turns are stored
 * with `storeTurn` (Neo4j + Postgres, as the HTTP API does), the worker's `consolidate` job
 * runs for that user (extraction, contradiction policy, SUPERSEDES, validity windows, as in
 * production), and the facts and entities are read back from Neo4j (`findFacts` with
 * inactive ones, the user's export for entities). Then the users are erased.
 *
 * Metrics per category (see score.ts for the normalisation): fact precision / recall / F1
 * on the facts current after the dialogue, past-fact recall, update accuracy (after a
 * change, the new value is current and the old one is not), stale-fact rate (a value that
 * should be past still current), entity precision / recall and merged names.
 *
 * Run: npm run bench:knowledge [-- --split dev|holdout] [--keep]
 *      npm run bench:knowledge -- --cases bench/data/knowledge-test-cases.json   (the blind test set)
 * Results: bench/results/<the dataset's name>.json (knowledge.json, knowledge-test.json); runs
 * of other extractor versions already in the file are kept, so a before/after comparison is one file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Command } from 'commander';
import { applyEnvFile, loadConfig } from '../src/config';
import { createMnemograph, type Mnemograph } from '../src/container';
import { createExtractor, RulesExtractor, type Extractor } from '../src/extraction';
import { createJobs } from '../src/worker';
import { scoreRun, type Case, type Observed, type RunScore } from './knowledge-score';

const ROOT = resolve(__dirname, '..');

interface Options {
  split?: string;
  keep?: boolean;
  cases?: string;
  only?: string;
}

interface ResultFile {
  benchmark: 'knowledge';
  dataset: { file: string; cases: number; byCategory: Record<string, number> };
  runs: Record<string, RunScore & { at: string; secondsPerCase: number; split: string }>;
  llm: string;
  node: string;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--split <split>', 'dev | holdout | all', 'all')
    .option('--cases <file>', 'dataset file', join(ROOT, 'bench/data/knowledge-cases.json'))
    .option('--only <ids>', 'comma-separated case ids (debugging)')
    .option('--keep', 'keep the bench users instead of erasing them')
    .parse()
    .opts<Options>();
  const dataset = JSON.parse(readFileSync(opts.cases!, 'utf8')) as { name?: string; cases: Case[] };
  const all = dataset.cases;
  const RESULTS = join(ROOT, `bench/results/${(dataset.name ?? 'knowledge').replace(/[^a-z0-9-]/gi, '')}.json`);
  const only = opts.only ? new Set(opts.only.split(',')) : undefined;
  const cases = all.filter((c) => (opts.split === 'all' || c.split === opts.split) && (!only || only.has(c.id)));

  applyEnvFile(process.env); // config/mnemograph.env, as every mnemograph command reads it
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'deferred', ERASURE_GRACE_MS: '0', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  const extractors: Extractor[] = [new RulesExtractor()];
  let llm = 'not configured (EXTRACTION_PROVIDER=rules); set EXTRACTION_PROVIDER, EXTRACTION_API_KEY (and EXTRACTION_BASE_URL) to add its run';
  if (config.extraction.provider !== 'rules') {
    extractors.push(createExtractor(config.extraction, { log: m.log }));
    llm = `${config.extraction.provider}/${config.extraction.model} (structured output ${config.extraction.structuredOutput ? 'on' : 'off'})`;
  }
  const previous: Partial<ResultFile> = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as ResultFile) : {};
  const out: ResultFile = {
    benchmark: 'knowledge',
    dataset: { file: relative(ROOT, resolve(opts.cases!)), cases: all.length, byCategory: countBy(all.map((c) => c.category)) },
    runs: { ...(previous.runs ?? {}) },
    llm,
    node: process.version,
  };
  try {
    for (const extractor of extractors) {
      const t0 = performance.now();
      const observed = await runCases(m, extractor, cases, opts.keep === true);
      const score = scoreRun(cases, observed);
      const key = `${extractor.provider}/${extractor.model}${opts.split === 'all' ? '' : `:${opts.split}`}${only ? ':subset' : ''}`;
      out.runs[key] = { ...score, split: opts.split!, at: new Date().toISOString(), secondsPerCase: +((performance.now() - t0) / 1000 / cases.length).toFixed(3) };
      printTable(key, score);
    }
  } finally {
    await m.close();
  }
  if (!only) {
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(RESULTS, JSON.stringify(out, null, 1) + '\n');
  }
}

/** Stores each case's turns as its own user, consolidates with `extractor`, reads back what was learned. */
async function runCases(m: Mnemograph, extractor: Extractor, cases: Case[], keep: boolean): Promise<Map<string, Observed>> {
  const run = `kb${Date.now().toString(36)}`;
  const jobs = createJobs({ config: m.config, stores: m.jobStores, knowledge: m.knowledge, extractor, observations: m.observations, locks: m.locks, log: m.log });
  const worker = m.createWorker({ jobs, workerId: `bench-knowledge-${run}` });
  const observed = new Map<string, Observed>();
  const base = Date.parse('2024-11-04T09:00:00Z');
  const userOf = (c: Case) => `${run}-${c.id}`;
  try {
    for (const c of cases) {
      for (const [i, raw] of c.turns.entries()) {
        const assistant = raw.startsWith('A: ');
        const content = assistant ? raw.slice(3) : raw;
        await m.memory.storeTurn({ userId: userOf(c), conversationId: `${userOf(c)}-c`, role: assistant ? 'assistant' : 'user', content, timestamp: new Date(base + i * 60_000).toISOString() });
      }
    }
    // One consolidation run per batch of conversations, as the scheduled job does, until none is left.
    const userIds = cases.map(userOf);
    for (;;) {
      const r = await worker.runJob('consolidate', { userIds });
      if (r.status !== 'succeeded') throw new Error(`consolidate failed: ${JSON.stringify(r)}`);
      if ((r.stats.conversations ?? 0) === 0) break;
    }
    for (const c of cases) {
      const userId = userOf(c);
      const facts = await m.memory.semantic.findFacts({ userId, channels: ['_global'], includeInactive: true, limit: 1000 });
      const entities: Array<{ name: string; aliases: string[] }> = [];
      for await (const line of m.users.export(userId)) {
        if (line.kind === 'node' && line.labels.includes('Entity') && line.props.valid_to == null)
          entities.push({ name: String(line.props.name), aliases: (line.props.aliases as string[] | undefined) ?? [] });
      }
      observed.set(c.id, { facts, entities });
    }
  } finally {
    await worker.stop();
    if (!keep) for (const c of cases) await m.users.erase(userOf(c));
  }
  return observed;
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

function printTable(key: string, s: RunScore): void {
  const rows = Object.entries(s.byCategory).map(([cat, v]) => ({
    category: cat,
    cases: v.cases,
    P: v.facts.precision,
    R: v.facts.recall,
    F1: v.facts.f1,
    pastR: v.past.recall,
    update: v.updates.accuracy,
    stale: v.stale.rate,
    entityP: v.entities.precision,
    merged: v.entities.merged,
  }));
  const o = s.overall;
  rows.push({
    category: 'ALL',
    cases: o.cases,
    P: o.facts.precision,
    R: o.facts.recall,
    F1: o.facts.f1,
    pastR: o.past.recall,
    update: o.updates.accuracy,
    stale: o.stale.rate,
    entityP: o.entities.precision,
    merged: o.entities.merged,
  });
  console.log(`\n${key}`);
  console.table(rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
