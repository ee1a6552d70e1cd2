/**
 * The worker's consolidation on LoCoMo: every session stored as a conversation (speaker A as
 * the user, B as the assistant, as bench:recall does; turns not embedded, as with deferred
 * embedding before the background embedder ran), then the `consolidate` job run until
 * nothing is left, with the configured extractor. Measures turns consolidated per second
 * and what was learned (facts, entities, superseded facts, read back from Neo4j), then
 * erases the users. Writes bench/results/consolidation.json (one entry per extractor version).
 * Run: npm run bench:consolidation   (LOCOMO_PATH overrides the data file)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { applyEnvFile, loadConfig } from '../src/config';
import { createMnemograph } from '../src/container';
import { consolidateUntilDone, storeLocomoConversation } from './locomo-consolidate';
import { defaultLocomoPath, loadLocomo } from './recall-datasets';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, 'bench/results/consolidation.json');

async function main(): Promise<void> {
  applyEnvFile(process.env); // config/mnemograph.env, as every mnemograph command reads it
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'deferred', ERASURE_GRACE_MS: '0', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  const ds = loadLocomo(defaultLocomoPath());
  const run = `cb${Date.now().toString(36)}`;
  const userOf = (key: string) => `${run}-${key}`;
  const users = ds.conversations.map((c) => userOf(c.key));
  try {
    let turns = 0;
    for (const conv of ds.conversations) turns += await storeLocomoConversation(m, conv, userOf(conv.key), (session) => `${run}-${session}`);
    const worker = m.createWorker({ workerId: `bench-consolidation-${run}` });
    const t0 = performance.now();
    let runs = 0;
    try {
      runs = await consolidateUntilDone(worker, users);
    } finally {
      await worker.stop();
    }
    const seconds = (performance.now() - t0) / 1000;
    let facts = 0;
    let active = 0;
    let superseded = 0;
    const entities = new Set<string>();
    const sample: string[] = [];
    for (const u of users) {
      const fs = await m.memory.semantic.findFacts({ userId: u, channels: ['_global'], includeInactive: true, limit: 1000 });
      facts += fs.length;
      active += fs.filter((f) => f.status === 'active').length;
      superseded += fs.filter((f) => f.status === 'superseded').length;
      sample.push(...fs.map((f) => `${f.claim} [${f.predicate}, ${f.status}${f.temporal !== 'current' ? `, ${f.temporal}` : ''}]`));
      for await (const line of m.users.export(u)) if (line.kind === 'node' && line.labels.includes('Entity')) entities.add(`${u}/${String(line.props.name)}`);
    }
    const key = `${config.extraction.provider}/${m.extractor.model}`;
    const previous = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as { runs: Record<string, unknown> }) : { runs: {} };
    const entry = {
      turns,
      seconds: +seconds.toFixed(1),
      turnsPerSecond: +(turns / seconds).toFixed(1),
      jobRuns: runs,
      facts,
      factsPerTurn: +(facts / turns).toFixed(3),
      activeFacts: active,
      supersededFacts: superseded,
      entities: entities.size,
      // Every 20th fact, for reading by hand.
      sample: sample.filter((_, i) => i % Math.max(1, Math.floor(sample.length / 40)) === 0).slice(0, 40),
      windowTurns: config.extraction.windowTurns,
      at: new Date().toISOString(),
    };
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(OUT, JSON.stringify({ benchmark: 'consolidation', dataset: 'locomo', runs: { ...previous.runs, [key]: entry }, node: process.version }, null, 1) + '\n');
    console.log(JSON.stringify({ [key]: { ...entry, sample: undefined } }, null, 1));
  } finally {
    for (const u of users) await m.users.erase(u);
    await m.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
