/**
 * Scoring of bench:knowledge (pure; unit-tested in test/unit/knowledge-score.test.ts).
 *
 * A fact is (subject, predicate, object). Before comparing, both gold and learned facts are
 * normalised:
 * - subject: case folded; "user", "I", "me", "the user" and the case's userName (the speaker's
 *   own name) are "user"; "my X" / "the user's X" is "user's X" with X's role normalised
 *   (mom -> mother, husband -> spouse...);
 * - predicate: a synonym table (PREDICATES) maps what extractors say (works_for, employer,
 *   resides_in, dog, girlfriend...) onto the benchmark's predicates; a negative `likes` is
 *   `dislikes`; any other negative fact ("does not work at X any more") is an ending or a
 *   denial, neither a current nor a past assertion, and is only counted (`negations`); a fact
 *   tagged `future` is a `plans` fact whatever its predicate;
 * - object: case and accents folded, punctuation and a leading article or possessive
 *   (a, an, the, my, our, his, her, their, some) dropped, a plural -s dropped from each word.
 *   Objects match when equal, when the gold words are all in the learned object and it has at
 *   most 3 more, or when the learned words are all in the gold object and cover at least half
 *   of it ("type 1 diabetes" / "diabetes").
 * Matching is one-to-one (greedy) within a case.
 *
 * Current learned facts: active, positive, tagged current, validity window open. Past:
 * positive facts that were superseded, are tagged past, or whose window closed (a retracted
 * fact is neither). Entities: the user's live entities except the user's own anchor
 * ("user", the userName); names compare case-, accent- and dot-insensitively. A merged name
 * is a learned entity that is not gold but contains one gold name (or the user's name) and
 * words of another ("Lisbon Dana").
 */
import type { Fact } from '../src/semantic/contract';

export type Triple = [subject: string, predicate: string, object: string];

export interface Case {
  id: string;
  category: string;
  /** dev and holdout: bench/data/knowledge-cases.json; test: the blind set, bench/data/knowledge-test-cases.json. */
  split: 'dev' | 'holdout' | 'test';
  turns: string[];
  userName?: string;
  current: Triple[];
  past?: Triple[];
  /** subject, predicate, new value (null: the state ended), old value (null: none said). */
  updates?: Array<[string, string, string | null, string | null]>;
  entities: string[];
  why: string;
}

export interface Observed {
  facts: Fact[];
  entities: Array<{ name: string; aliases: string[] }>;
}

export interface Prf {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface Bucket {
  cases: number;
  facts: Prf;
  past: { gold: number; found: number; recall: number | null };
  updates: { total: number; correct: number; accuracy: number | null };
  stale: { gold: number; stillCurrent: number; rate: number | null };
  entities: Prf & { merged: number };
  negations: number;
}

export interface RunScore {
  overall: Bucket;
  byCategory: Record<string, Bucket>;
  bySplit: Record<string, Bucket>;
  /** Per case: what was missed, what was wrong (for reading, not scoring). */
  errors: Array<{ id: string; missed: string[]; spurious: string[]; stale: string[]; updatesWrong: string[]; entitiesSpurious: string[]; entitiesMissed: string[] }>;
}

/** Extractor predicates -> the benchmark's. Anything not listed compares as itself. */
export const PREDICATES: Readonly<Record<string, string>> = {
  works_for: 'works_at',
  employer: 'works_at',
  employed_by: 'works_at',
  works_at_company: 'works_at',
  job: 'job_title',
  occupation: 'job_title',
  profession: 'job_title',
  role: 'job_title',
  title: 'job_title',
  works_as: 'job_title',
  is_a: 'job_title',
  field: 'works_in',
  studies: 'studies_at',
  attends: 'studies_at',
  student_at: 'studies_at',
  resides_in: 'lives_in',
  lives: 'lives_in',
  location: 'lives_in',
  home: 'lives_in',
  based_in: 'lives_in',
  hometown: 'from',
  origin: 'from',
  grew_up_in: 'from',
  born_in: 'from',
  is_from: 'from',
  mom: 'mother',
  mum: 'mother',
  dad: 'father',
  husband: 'spouse',
  wife: 'spouse',
  married_to: 'spouse',
  boyfriend: 'partner',
  girlfriend: 'partner',
  fiance: 'partner',
  fiancee: 'partner',
  dating: 'partner',
  kid: 'child',
  children: 'child',
  has_child: 'child',
  grandma: 'grandmother',
  grandpa: 'grandfather',
  coworker: 'colleague',
  best_friend: 'friend',
  dog: 'pet',
  cat: 'pet',
  has_pet: 'pet',
  pet_name: 'pet',
  pets: 'pet',
  has: 'owns',
  owns_item: 'owns',
  possesses: 'owns',
  drives: 'owns',
  allergy: 'allergic_to',
  allergies: 'allergic_to',
  allergic: 'allergic_to',
  condition: 'has_condition',
  health_condition: 'has_condition',
  diagnosed_with: 'has_condition',
  medication: 'takes',
  diet_type: 'diet',
  dietary_preference: 'diet',
  does_not_eat: 'avoids',
  love: 'likes',
  loves: 'likes',
  enjoys: 'likes',
  favorite: 'likes',
  favourite: 'likes',
  interested_in: 'likes',
  hates: 'dislikes',
  dislike: 'dislikes',
  prefer: 'prefers',
  preference: 'prefers',
  plan: 'plans',
  plans_to: 'plans',
  event: 'plans',
  appointment: 'plans',
  routine: 'schedule',
  wants_to: 'goal',
  goals: 'goal',
  aspiration: 'goal',
  hobby: 'activity',
  hobbies: 'activity',
  habit: 'activity',
  does: 'activity',
  plays: 'activity',
};

const ROLE_WORDS: Readonly<Record<string, string>> = { mom: 'mother', mum: 'mother', dad: 'father', husband: 'spouse', wife: 'spouse', boyfriend: 'partner', girlfriend: 'partner' };
const DETERMINERS = new Set(['a', 'an', 'the', 'my', 'our', 'his', 'her', 'their', 'some', 'user', 's']);

export function fold(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export function normSubject(raw: string, userName?: string): string {
  const s = fold(raw);
  if (['user', 'i', 'me', 'the user', 'speaker', 'myself'].includes(s) || (userName && s === fold(userName))) return 'user';
  const role = /^(?:my|the user|user)\s+(\w+)$/.exec(s) ?? /^(?:the )?user s (\w+)$/.exec(s);
  if (role) return `user's ${ROLE_WORDS[role[1]!] ?? role[1]!}`;
  return s;
}

export function normPredicate(raw: string): string {
  const p = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  return PREDICATES[p] ?? p;
}

export function objectWords(raw: string): string[] {
  const words = fold(raw)
    .split(/\s+/)
    .filter((w) => w.length > 0);
  while (words.length > 1 && DETERMINERS.has(words[0]!)) words.shift();
  return words.map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

export function objectsMatch(gold: string, learned: string): boolean {
  const g = objectWords(gold);
  const l = objectWords(learned);
  if (g.length === 0 || l.length === 0) return false;
  if (g.join(' ') === l.join(' ')) return true;
  const inL = new Set(l);
  if (g.every((w) => inL.has(w)) && l.length - g.length <= 3) return true;
  const inG = new Set(g);
  return l.every((w) => inG.has(w)) && l.length * 2 >= g.length;
}

interface Norm {
  s: string;
  p: string;
  o: string;
  raw: string;
}

function normTriple(t: Triple, userName?: string): Norm {
  return { s: normSubject(t[0], userName), p: normPredicate(t[1]), o: t[2], raw: t.join(' | ') };
}

function same(a: Norm, b: Norm): boolean {
  return a.s === b.s && a.p === b.p && objectsMatch(a.o, b.o);
}

/** One-to-one greedy matching: how many gold items found a learned one, and which were left on each side. */
function match(gold: Norm[], learned: Norm[]): { tp: number; missed: Norm[]; spurious: Norm[] } {
  const free = [...learned];
  const missed: Norm[] = [];
  let tp = 0;
  for (const g of gold) {
    const i = free.findIndex((l) => same(g, l));
    if (i >= 0) {
      tp++;
      free.splice(i, 1);
    } else missed.push(g);
  }
  return { tp, missed, spurious: free };
}

/** The learned facts as triples: what is current now and what is past (see the header). */
export function learnedTriples(facts: Fact[], userName: string | undefined, now: number): { current: Norm[]; past: Norm[]; negations: number } {
  const current: Norm[] = [];
  const past: Norm[] = [];
  let negations = 0;
  for (const f of facts) {
    if (f.status === 'retracted') continue;
    const p = f.properties;
    const subject = typeof p.subject === 'string' ? p.subject : 'user';
    const object = typeof p.object === 'string' ? p.object : f.claim;
    let predicate = normPredicate(f.predicate ?? 'fact');
    if (p.polarity === 'negative') {
      if (predicate === 'likes') predicate = 'dislikes';
      else if (predicate === 'dislikes') predicate = 'likes';
      else {
        negations++;
        continue;
      }
    }
    if (f.temporal === 'future') predicate = 'plans';
    const n: Norm = { s: normSubject(subject, userName), p: predicate, o: object, raw: `${subject} | ${f.predicate} | ${object}${p.polarity === 'negative' ? ' (negative)' : ''}` };
    const closed = f.validTo !== null && Date.parse(f.validTo) <= now;
    if (f.status === 'superseded' || f.temporal === 'past' || closed) past.push(n);
    else current.push(n);
  }
  return { current, past, negations };
}

function prf(tp: number, fp: number, fn: number): Prf {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { tp, fp, fn, precision: +precision.toFixed(3), recall: +recall.toFixed(3), f1: +f1.toFixed(3) };
}

interface Tally {
  cases: number;
  tp: number;
  fp: number;
  fn: number;
  pastGold: number;
  pastFound: number;
  updates: number;
  updatesRight: number;
  staleGold: number;
  stale: number;
  etp: number;
  efp: number;
  efn: number;
  merged: number;
  negations: number;
}
const emptyTally = (): Tally => ({ cases: 0, tp: 0, fp: 0, fn: 0, pastGold: 0, pastFound: 0, updates: 0, updatesRight: 0, staleGold: 0, stale: 0, etp: 0, efp: 0, efn: 0, merged: 0, negations: 0 });

function add(a: Tally, b: Tally): void {
  for (const k of Object.keys(a) as Array<keyof Tally>) a[k] += b[k];
}

function bucket(t: Tally): Bucket {
  // null: nothing of the kind in the bucket (no past fact, no update), not a perfect score.
  const ratio = (n: number, d: number) => (d === 0 ? null : +(n / d).toFixed(3));
  return {
    cases: t.cases,
    facts: prf(t.tp, t.fp, t.fn),
    past: { gold: t.pastGold, found: t.pastFound, recall: ratio(t.pastFound, t.pastGold) },
    updates: { total: t.updates, correct: t.updatesRight, accuracy: ratio(t.updatesRight, t.updates) },
    stale: { gold: t.staleGold, stillCurrent: t.stale, rate: ratio(t.stale, t.staleGold) },
    entities: { ...prf(t.etp, t.efp, t.efn), merged: t.merged },
    negations: t.negations,
  };
}

export function entityKey(name: string): string {
  return fold(name.replace(/\./g, ''));
}

/** Scores one case. */
export function scoreCase(c: Case, o: Observed, now = Date.now()): { tally: Tally; errors: RunScore['errors'][number] } {
  const t = emptyTally();
  t.cases = 1;
  const learned = learnedTriples(o.facts, c.userName, now);
  t.negations = learned.negations;
  const gold = c.current.map((x) => normTriple(x, c.userName));
  const cur = match(gold, learned.current);
  t.tp = cur.tp;
  t.fn = cur.missed.length;
  t.fp = cur.spurious.length;

  const goldPast = (c.past ?? []).map((x) => normTriple(x, c.userName));
  t.pastGold = goldPast.length;
  t.pastFound = match(goldPast, learned.past).tp;
  t.staleGold = goldPast.length;
  const stale = goldPast.filter((g) => learned.current.some((l) => same(g, l)));
  t.stale = stale.length;

  const updatesWrong: string[] = [];
  for (const [s0, p0, now0, old0] of c.updates ?? []) {
    t.updates++;
    const s = normSubject(s0, c.userName);
    const p = normPredicate(p0);
    const values = learned.current.filter((l) => l.s === s && l.p === p);
    const newOk = now0 === null || values.some((l) => objectsMatch(now0, l.o));
    const oldGone = old0 === null || !values.some((l) => objectsMatch(old0, l.o));
    if (newOk && oldGone) t.updatesRight++;
    else updatesWrong.push(`${s} ${p}: want ${now0 ?? '(none)'}, have ${values.map((v) => v.o).join(', ') || '(none)'}`);
  }

  const self = new Set(['user', ...(c.userName ? [entityKey(c.userName)] : [])]);
  const learnedEntities = o.entities.map((e) => entityKey(e.name)).filter((n) => !self.has(n));
  const goldEntities = new Set(c.entities.map(entityKey));
  const found = new Set(learnedEntities.filter((n) => goldEntities.has(n)));
  const spurious = learnedEntities.filter((n) => !goldEntities.has(n));
  t.etp = found.size;
  t.efp = spurious.length;
  t.efn = [...goldEntities].filter((g) => !found.has(g)).length;
  const known = [...goldEntities, ...(c.userName ? [entityKey(c.userName)] : [])];
  t.merged = spurious.filter((n) => isMerged(n, known)).length;

  return {
    tally: t,
    errors: {
      id: c.id,
      missed: cur.missed.map((x) => x.raw),
      spurious: cur.spurious.map((x) => x.raw),
      stale: stale.map((x) => x.raw),
      updatesWrong,
      entitiesSpurious: spurious,
      entitiesMissed: [...goldEntities].filter((g) => !found.has(g)),
    },
  };
}

/** A learned name made of one known name and words of another ("lisbon dana"). */
export function isMerged(name: string, known: string[]): boolean {
  const words = name.split(' ');
  const parts = known.filter((k) => k !== name && k.split(' ').every((w) => words.includes(w)));
  if (parts.length === 0) return false;
  return known.some((k) => !parts.includes(k) && k.split(' ').some((w) => words.includes(w))) || parts.length > 1;
}

export function scoreRun(cases: Case[], observed: Map<string, Observed>, now = Date.now()): RunScore {
  const overall = emptyTally();
  const byCategory = new Map<string, Tally>();
  const bySplit = new Map<string, Tally>();
  const errors: RunScore['errors'] = [];
  for (const c of cases) {
    const o = observed.get(c.id);
    if (!o) throw new Error(`no observation for case ${c.id}`);
    const { tally, errors: e } = scoreCase(c, o, now);
    add(overall, tally);
    for (const [map, key] of [
      [byCategory, c.category],
      [bySplit, c.split],
    ] as const) {
      if (!map.has(key)) map.set(key, emptyTally());
      add(map.get(key)!, tally);
    }
    if (e.missed.length || e.spurious.length || e.stale.length || e.updatesWrong.length || e.entitiesSpurious.length || e.entitiesMissed.length) errors.push(e);
  }
  const toObj = (m: Map<string, Tally>) => Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, bucket(v)]));
  return { overall: bucket(overall), byCategory: toObj(byCategory), bySplit: toObj(bySplit), errors };
}
