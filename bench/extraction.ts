/**
 * Rules-extractor quality on LoCoMo: people and places found in 60 hand-labelled turns
 * (test/fixtures/extraction-labels.json), as precision / recall / F1 per type, plus a
 * whole-corpus run (entities and facts per turn, throughput). Writes bench/results/extraction.json.
 * Run: npm run bench:extraction   (LOCOMO_PATH overrides the data file)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultLocomoPath } from './recall-datasets';
import { RulesExtractor } from '../src/extraction/rules-extractor';

interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
}
interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
}
interface Label {
  sampleId: string;
  diaId: string;
  people: string[];
  places: string[];
}

const root = resolve(__dirname, '..');
const data = JSON.parse(readFileSync(defaultLocomoPath(), 'utf8')) as Sample[];
const labels = (JSON.parse(readFileSync(join(root, 'test/fixtures/extraction-labels.json'), 'utf8')) as { turns: Label[] }).turns;
const extractor = new RulesExtractor({ factsFromAllRoles: true });

function turnsOf(s: Sample): Array<LocomoTurn & { session: string }> {
  return Object.keys(s.conversation)
    .filter((k) => /^session_\d+$/.test(k))
    .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]))
    .flatMap((k) => (s.conversation[k] as LocomoTurn[]).map((t) => ({ ...t, session: k })));
}

async function extractTurn(t: LocomoTurn, at = '2023-05-08T12:00:00Z') {
  return extractor.extract({ userId: 'bench', channel: '_global', turns: [{ id: `b:${t.dia_id.replace(/\D+/g, '')}`, role: 'user', content: t.text, timestamp: at, speaker: t.speaker }] });
}

const norm = (s: string) => s.toLowerCase().trim();
function score(tp: number, fp: number, fn: number) {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { tp, fp, fn, precision: +precision.toFixed(3), recall: +recall.toFixed(3), f1: +(precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)).toFixed(3) };
}

async function main() {
  const byId = new Map(data.flatMap((s) => turnsOf(s).map((t) => [`${s.sample_id}/${t.dia_id}`, t] as const)));
  const counts = { people: { tp: 0, fp: 0, fn: 0 }, places: { tp: 0, fp: 0, fn: 0 } };
  const errors: Array<{ turn: string; type: string; missed: string[]; spurious: string[] }> = [];
  for (const l of labels) {
    const t = byId.get(`${l.sampleId}/${l.diaId}`);
    if (!t) throw new Error(`label ${l.sampleId}/${l.diaId} points at no turn`);
    const r = await extractTurn(t);
    // The speaker is added as the subject of first-person facts; count only names the text mentions.
    const mentioned = r.entities.filter((e) => norm(e.name) !== norm(t.speaker) || t.text.toLowerCase().includes(norm(t.speaker)));
    for (const [type, gold, predicted] of [
      ['people', l.people, mentioned.filter((e) => e.type === 'person').map((e) => e.name)],
      ['places', l.places, mentioned.filter((e) => e.type === 'place').map((e) => e.name)],
    ] as const) {
      const g = new Set(gold.map(norm));
      const p = new Set(predicted.map(norm));
      const c = counts[type];
      const missed = [...g].filter((x) => !p.has(x));
      const spurious = [...p].filter((x) => !g.has(x));
      c.tp += [...p].filter((x) => g.has(x)).length;
      c.fp += spurious.length;
      c.fn += missed.length;
      if (missed.length || spurious.length) errors.push({ turn: `${l.sampleId}/${l.diaId}`, type, missed, spurious });
    }
  }

  // Whole corpus: how much the rules extractor finds, and how fast.
  let turns = 0;
  let entities = 0;
  let facts = 0;
  const t0 = performance.now();
  for (const s of data) {
    for (const t of turnsOf(s)) {
      const r = await extractTurn(t);
      turns++;
      entities += r.entities.length;
      facts += r.facts.length;
    }
  }
  const seconds = (performance.now() - t0) / 1000;

  const result = {
    benchmark: 'extraction',
    extractor: `${extractor.provider}/${extractor.model}`,
    labelled: { turns: labels.length, people: score(counts.people.tp, counts.people.fp, counts.people.fn), places: score(counts.places.tp, counts.places.fp, counts.places.fn) },
    errors,
    corpus: { turns, entities, facts, entitiesPerTurn: +(entities / turns).toFixed(3), factsPerTurn: +(facts / turns).toFixed(3), turnsPerSecond: +(turns / seconds).toFixed(1) },
    node: process.version,
    at: new Date().toISOString(),
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/extraction.json'), JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify({ labelled: result.labelled, corpus: result.corpus }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
