/**
 * The extractor against a public benchmark the project did not write: LoCoMo's gold
 * observations (about 2,541 facts about the two speakers of its ten conversations, each with
 * its evidence turns; see bench/locomo-observations.ts), through the real write path.
 *
 * Each LoCoMo conversation is one user; each session a conversation with its real date,
 * every turn with its speaker in metadata (bench/locomo-consolidate.ts, as bench:consolidation
 * and bench:recall store LoCoMo: speaker A the user, speaker B the assistant; `--roles
 * both-user` stores both as user turns). The worker's `consolidate` job runs with the
 * configured extractor (the default: rules, on its thread) until nothing is left; the facts
 * are read back with `semantic.findFacts` (inactive ones too) and their source turns and ABOUT
 * entities from the user's export (DERIVED_FROM, ABOUT). Then the users are erased.
 *
 * Scored by bench/observation-score.ts: coverage of the observations (overall, per speaker,
 * per keyword class), facts per turn, the share of facts from turns no observation cites,
 * facts attributed to the other speaker, the matching rule against the hand labels of
 * bench/data/locomo-observation-match-labels.json, and precision from the hand labels of
 * bench/data/locomo-fact-precision-labels.json. Sampled items without a label are counted
 * and listed, never guessed; `--todo FILE` writes them with their turns, for labelling.
 *
 * Run: npm run bench:observations [-- --roles a-user|both-user] [--conversations conv-26] [--todo /tmp/todo.json]
 * Results: bench/results/knowledge-locomo-observations.json (one run per extractor and roles;
 * not written for a subset of conversations).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { applyEnvFile, loadConfig } from '../src/config';
import { createMnemograph } from '../src/container';
import { learnFromLocomo, type SpeakerRoles } from './locomo-consolidate';
import { loadLocomoObservations, turnRef, type ObservationDataset } from './locomo-observations';
import { factKey, pairKey, scoreObservations, type PairLabel, type PrecisionLabel } from './observation-score';
import { defaultLocomoPath, loadLocomo, type BenchDataset } from './recall-datasets';

const ROOT = resolve(__dirname, '..');
const RESULTS = join(ROOT, 'bench/results/knowledge-locomo-observations.json');
const PAIR_LABELS = join(ROOT, 'bench/data/locomo-observation-match-labels.json');
const PRECISION_LABELS = join(ROOT, 'bench/data/locomo-fact-precision-labels.json');

const ROLES: Record<SpeakerRoles, string> = {
  'a-user': "speaker_a's turns stored as role user, speaker_b's as role assistant (as bench:recall and bench:consolidation); each turn's speaker in metadata",
  'both-user': "both speakers' turns stored as role user; each turn's speaker in metadata",
};

const METHOD = {
  coverage:
    'an observation is covered when a learned fact matches it (bench/observation-score.ts): sourced from one of its evidence turns, its subject words in the observation, and at least one and half of its value words among the observation content words (folded, stop words out, light stem)',
  coverageByHandLabels: 'the same, with the hand labels of bench/data/locomo-observation-match-labels.json instead of the rule; atLeast/atMost bound it while some candidate pairs are unlabelled',
  withCandidate: 'observations with any learned fact from one of their evidence turns: the ceiling of coverage for this extractor',
  classes: 'LoCoMo gives observations no category: keyword classes of the observation text, first match in OBSERVATION_CLASSES order',
  precision:
    'hand labels of bench/data/locomo-fact-precision-labels.json over a sample of the learned facts (sha256 of seed and fact identity); sampled facts without a label are counted as unlabelled, never guessed',
  wrongSpeaker: "facts whose subject names one speaker ('user' is speaker A) while the turn they came from was said by the other",
};

interface Options {
  roles: string;
  conversations?: string;
  seed: string;
  pairSample: string;
  precisionSample: string;
  todo?: string;
  todoAllPairs?: boolean;
  keep?: boolean;
}

async function main(): Promise<void> {
  const opts = new Command()
    .option('--roles <roles>', 'a-user (speaker A the user, B the assistant, as bench:recall) | both-user', 'a-user')
    .option('--conversations <ids>', 'comma-separated LoCoMo sample ids (a subset: results are not written)')
    .option('--seed <seed>', 'seed of the labelled samples', 'locomo-observations-1')
    .option('--pair-sample <n>', 'observation/fact pairs checked against hand labels', '120')
    .option('--precision-sample <n>', 'facts sampled for precision', '150')
    .option('--todo <file>', 'write the sampled items that have no label yet, with their turns')
    .option('--todo-all-pairs', 'with --todo: every candidate pair without a label, not only the sampled ones (for coverage by hand labels)')
    .option('--keep', 'keep the bench users instead of erasing them')
    .parse()
    .opts<Options>();
  if (!Object.hasOwn(ROLES, opts.roles)) throw new Error(`--roles must be a-user or both-user, not ${opts.roles}`);
  const roles = opts.roles as SpeakerRoles;
  const only = opts.conversations ? new Set(opts.conversations.split(',')) : undefined;
  const path = defaultLocomoPath();
  const ds = loadLocomo(path);
  ds.conversations = ds.conversations.filter((c) => !only || only.has(c.key));
  const gold = loadLocomoObservations(path, only);

  applyEnvFile(process.env); // config/mnemograph.env, as every mnemograph command reads it
  const config = loadConfig({ ...process.env, EMBEDDING_MODE: 'deferred', ERASURE_GRACE_MS: '0', MIGRATE_ON_START: 'true', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const m = await createMnemograph(config, { backgroundEmbedding: false });
  console.log(`stores: Neo4j ${config.neo4j.uri}, PostgreSQL ${new URL(config.postgres.url).pathname.slice(1)}`);
  const key = `${config.extraction.provider}/${m.extractor.model}:${roles}`;
  let learned: Awaited<ReturnType<typeof learnFromLocomo>>;
  try {
    learned = await learnFromLocomo(m, ds, roles, opts.keep === true);
  } finally {
    await m.close();
  }

  const pairLabels = readLabels<PairLabel>(PAIR_LABELS);
  const precisionLabels = readLabels<PrecisionLabel>(PRECISION_LABELS);
  const score = scoreObservations({
    observations: gold.observations,
    facts: learned.facts,
    speakers: gold.speakers,
    turnSpeakers: gold.turnSpeakers,
    turns: learned.turns,
    pairLabels,
    precisionLabels,
    seed: opts.seed,
    pairSample: Number(opts.pairSample),
    precisionSample: Number(opts.precisionSample),
  });
  if (opts.todo)
    writeTodo(
      opts.todo,
      { facts: score.samples.facts, pairs: opts.todoAllPairs ? score.samples.allPairs : score.samples.pairs },
      ds,
      gold,
      new Set(pairLabels.map((l) => l.pair)),
      new Set(precisionLabels.map((l) => l.key)),
    );

  const { samples: _samples, covered, ...figures } = score;
  const entry = {
    roles: ROLES[roles],
    ...figures,
    coveredExamples: covered.slice(0, 40).map((o) => `${o.conversation} ${o.evidence.join(',')} ${o.speaker}: ${o.text}`),
    seconds: learned.seconds,
    at: new Date().toISOString(),
  };
  printSummary(key, entry);
  if (only) return;
  const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as { runs?: Record<string, unknown> }) : {};
  const out = {
    benchmark: 'knowledge-locomo-observations',
    dataset: { file: 'locomo10.json (snap-research/LoCoMo, CC BY-NC 4.0)', conversations: gold.speakers.size, observations: gold.observations.length, unresolvedObservations: gold.unresolved },
    seed: opts.seed,
    method: METHOD,
    runs: { ...(previous.runs ?? {}), [key]: entry },
    node: process.version,
  };
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(RESULTS, JSON.stringify(out, null, 1) + '\n');
}

function readLabels<T>(path: string): T[] {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { labels: T[] }).labels : [];
}

/** The sampled facts and pairs with no label yet, each with the turns it rests on, for labelling by hand. */
function writeTodo(
  file: string,
  samples: Pick<ReturnType<typeof scoreObservations>['samples'], 'facts' | 'pairs'>,
  ds: BenchDataset,
  gold: ObservationDataset,
  pairDone: Set<string>,
  factDone: Set<string>,
): void {
  const text = new Map<string, string>();
  for (const c of ds.conversations) for (const s of c.sessions) s.turns.forEach((t, i) => text.set(turnRef(c.key, `D${s.key.split('-s').pop()}:${i + 1}`), `${t.speaker}: ${t.content}`));
  const turnsOf = (conv: string, dias: string[]) => dias.map((d) => `${d} ${text.get(turnRef(conv, d)) ?? '?'}`);
  const facts = samples.facts.filter((f) => !factDone.has(factKey(f))).map((f) => ({ key: factKey(f), fact: f.claim, status: f.status, turns: turnsOf(f.conversation, f.sources) }));
  const pairs = samples.pairs
    .filter((p) => !pairDone.has(pairKey(p.o, p.f)))
    .map((p) => ({
      pair: pairKey(p.o, p.f),
      observation: `${p.o.speaker}: ${p.o.text}`,
      fact: `${p.f.claim} [${p.f.subject} | ${p.f.predicate} | ${p.f.object ?? ''}]`,
      rule: p.rule,
      turns: turnsOf(p.o.conversation, p.o.evidence),
    }));
  writeFileSync(file, JSON.stringify({ speakers: Object.fromEntries(gold.speakers), facts, pairs }, null, 1) + '\n');
  console.log(`${facts.length} facts and ${pairs.length} pairs to label: ${file}`);
}

function printSummary(key: string, e: Omit<ReturnType<typeof scoreObservations>, 'samples' | 'covered'>): void {
  const c = e.coverage;
  console.log(`\n${key}`);
  console.table({ overall: c.overall, ...c.bySpeakerRole });
  console.table(c.byClass);
  const { wrongSpeakerFacts: _w, byPredicate: _p, ...facts } = e.facts;
  console.log(JSON.stringify({ facts, matchRule: e.matchRule, precision: { ...e.precision, unlabelledFacts: undefined } }, null, 1));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
