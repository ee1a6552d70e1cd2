/**
 * Scoring of bench:observations (pure; unit-tested in test/unit/observation-score.test.ts):
 * the facts the extractor learned from LoCoMo against LoCoMo's gold observations.
 *
 * Matching rule (fixed before looking at results, validated against hand labels, never tuned
 * on them): a learned fact matches a gold observation when
 * 1. it is sourced from one of the observation's evidence turns (any of its DERIVED_FROM turns),
 * 2. its subject is in the observation: every content word of the subject ("user" read as
 *    speaker A, the service's user) is a word of the observation ("Melanie's kids" needs
 *    "melanie" and "kid"), and
 * 3. its value overlaps the observation: at least one, and at least half, of the content words
 *    of its object (of its claim without the subject's words when it has no object) are
 *    content words of the observation.
 * Content words: case and accents folded, possessive 's dropped, split at anything not a
 * letter or digit, stop words dropped, then a light stem (-ing, -ed, -s and a final -e off, a
 * doubled final consonant undone), so "painting", "painted" and "paints" are one word.
 *
 * Observation classes are keyword classes of the observation's text (LoCoMo gives
 * observations no category): the first class in OBSERVATION_CLASSES whose pattern matches.
 */
import { createHash } from 'node:crypto';
import type { GoldObservation, LocomoSpeakers } from './locomo-observations';
import { turnRef } from './locomo-observations';

/** A learned fact as read back from the semantic store. */
export interface LearnedFact {
  conversation: string;
  id: string;
  subject: string;
  predicate: string;
  object?: string;
  claim: string;
  polarity: 'positive' | 'negative';
  temporal: string;
  status: string;
  /** Dia ids of its source turns: the fact's own sourceTurnId first, then other DERIVED_FROM turns. */
  sources: string[];
  /** Names of the entities it is ABOUT. */
  about: string[];
}

export type MatchLabel = 'match' | 'no match';
export interface PairLabel {
  pair: string;
  observation: string;
  fact: string;
  label: MatchLabel;
  why: string;
}
export type PrecisionLabel = { key: string; fact: string; turns: string[]; label: 'correct' } | { key: string; fact: string; turns: string[]; label: 'wrong'; reason: string; why: string };

const STOP = new Set(
  (
    'a an the and or but if of to in on at by for with from about as into onto over under after before during than then so that this these those ' +
    'is are was were be been being am do does did done has have had having will would shall should can could may might must ' +
    'i me my mine we us our you your he him his she her hers it its they them their theirs who whom which what when where why how ' +
    'not no nor very really just also too more most some any all each every both other such own same only again further once ' +
    'user s t up out off there here now new one get got make made like recently currently'
  ).split(' '),
);

export function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ied')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(?:ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

export function words(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && !STOP.has(w))
    .map(stem);
}

/** The speaker a subject names: "user" / "user's X" is speaker A (the user), "<name>" / "<name>'s X" that speaker. */
export function subjectOwner(subject: string, speakers: LocomoSpeakers): string | undefined {
  const s = subject.trim().toLowerCase();
  const head = s.replace(/['’]s\b.*$/, '');
  if (head === 'user' || head === 'the user') return speakers.a;
  for (const name of [speakers.a, speakers.b]) if (head === name.toLowerCase()) return name;
  return undefined;
}

function subjectWords(subject: string, speakers: LocomoSpeakers): string[] {
  return words(subject.replace(/^(?:the )?user\b/i, speakers.a));
}

function valueWords(f: LearnedFact, speakers: LocomoSpeakers): string[] {
  if (f.object) return words(f.object);
  const subject = new Set(subjectWords(f.subject, speakers));
  return words(f.claim).filter((w) => !subject.has(w));
}

/** The matching rule of the header; `overlap` is the share of the value's words found. */
export function ruleMatch(o: GoldObservation, f: LearnedFact, speakers: LocomoSpeakers): { match: boolean; sourced: boolean; subject: boolean; overlap: number } {
  const sourced = f.conversation === o.conversation && f.sources.some((s) => o.evidence.includes(s));
  const obs = new Set(words(o.text));
  const subject = subjectWords(f.subject, speakers).every((w) => obs.has(w));
  const value = [...new Set(valueWords(f, speakers))];
  const found = value.filter((w) => obs.has(w)).length;
  const overlap = value.length === 0 ? 0 : found / value.length;
  return { match: sourced && subject && found >= 1 && overlap >= 0.5, sourced, subject, overlap: +overlap.toFixed(3) };
}

export const OBSERVATION_CLASSES: ReadonlyArray<[string, RegExp]> = [
  ['pets', /\b(?:dog|dogs|cat|cats|pet|pets|puppy|puppies|kitten|turtle|turtles|bird|fish|horse)\b/i],
  [
    'family_relationships',
    /\b(?:family|mom|mother|dad|father|kids?|child|children|son|daughter|husband|wife|partner|boyfriend|girlfriend|married|marriage|wedding|sister|brother|grand\w*|parents?|relative|cousin|aunt|uncle)\b/i,
  ],
  ['work_career', /\b(?:job|work|works|worked|working|career|company|business|boss|colleagues?|coworkers?|office|promot\w*|hired|interview|clients?|startup|project|shop|store|team)\b/i],
  ['education', /\b(?:school|class|classes|course|courses|study|studying|degree|college|university|student|exam|teacher|education|workshop)\b/i],
  ['health', /\b(?:health|healthy|doctor|hospital|sick|ill|illness|injur\w*|surgery|therapy|therapist|diet|medication|mental|anxiety|stress|pain)\b/i],
  ['travel_places', /\b(?:trip|travel\w*|visit\w*|vacation|holiday|city|country|abroad|moved|beach|camping|road trip|flight)\b/i],
  [
    'hobbies_activities',
    /\b(?:paint\w*|music|guitar|violin|piano|sing\w*|games?|gaming|read\w*|books?|art|dance|dancing|cook\w*|bak\w*|hik\w*|run\w*|sports?|play\w*|photo\w*|writ\w*|garden\w*|yoga|swim\w*|concert|movies?|hobby|hobbies)\b/i,
  ],
  ['plans_goals', /\b(?:plan|plans|planning|goal|goals|hopes?|hoping|wants?|dream\w*|going to|will|aim\w*|future)\b/i],
  ['feelings_views', /\b(?:feel\w*|felt|thinks?|believes?|values?|appreciat\w*|proud|happy|excit\w*|grateful|support\w*|inspir\w*|loves?|enjoy\w*|passionate)\b/i],
];

export function observationClass(text: string): string {
  return OBSERVATION_CLASSES.find(([, re]) => re.test(text))?.[0] ?? 'other';
}

export const observationKey = (o: GoldObservation) => `${o.conversation} ${o.evidence.join(',')} ${o.speaker}: ${o.text}`;
/** A fact's identity across runs: conversation, its first source turn, subject, predicate, object, polarity, tense. */
export const factKey = (f: LearnedFact) =>
  `${f.conversation} ${f.sources[0] ?? '-'} | ${f.subject} | ${f.predicate} | ${f.object ?? ''}${f.polarity === 'negative' ? ' | negative' : ''}${f.temporal !== 'current' ? ` | ${f.temporal}` : ''}`;
export const pairKey = (o: GoldObservation, f: LearnedFact) => `${observationKey(o)} || ${factKey(f)}`;

/** The `n` items whose sha256(seed:key) is lowest: a fixed sample that a changed item set only partly displaces. */
export function sampleByHash<T>(items: T[], key: (x: T) => string, n: number, seed: string): T[] {
  const h = (x: T) =>
    createHash('sha256')
      .update(`${seed}:${key(x)}`)
      .digest('hex');
  return items
    .map((x) => ({ x, h: h(x) }))
    .sort((a, b) => a.h.localeCompare(b.h))
    .slice(0, n)
    .map((r) => r.x);
}

/** Every (observation, fact) pair where the fact is sourced from one of the observation's evidence turns. */
export function candidatePairs(observations: GoldObservation[], facts: LearnedFact[]): Array<{ o: GoldObservation; f: LearnedFact }> {
  const byTurn = new Map<string, LearnedFact[]>();
  for (const f of facts) for (const s of new Set(f.sources)) byTurn.set(turnRef(f.conversation, s), [...(byTurn.get(turnRef(f.conversation, s)) ?? []), f]);
  const out: Array<{ o: GoldObservation; f: LearnedFact }> = [];
  for (const o of observations) {
    const seen = new Set<string>();
    for (const d of o.evidence)
      for (const f of byTurn.get(turnRef(o.conversation, d)) ?? []) {
        if (seen.has(f.id)) continue;
        seen.add(f.id);
        out.push({ o, f });
      }
  }
  return out;
}

export interface Coverage {
  observations: number;
  covered: number;
  coverage: number | null;
  /** Observations with at least one learned fact from an evidence turn (matching or not). */
  withCandidate: number;
}

const ratio = (n: number, d: number) => (d === 0 ? null : +(n / d).toFixed(4));

function coverage(items: Array<{ covered: boolean; candidate: boolean }>): Coverage {
  const covered = items.filter((i) => i.covered).length;
  return { observations: items.length, covered, coverage: ratio(covered, items.length), withCandidate: items.filter((i) => i.candidate).length };
}

function groupCoverage<T extends { covered: boolean; candidate: boolean }>(items: T[], by: (x: T) => string): Record<string, Coverage> {
  const groups = new Map<string, T[]>();
  for (const i of items) groups.set(by(i), [...(groups.get(by(i)) ?? []), i]);
  return Object.fromEntries([...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, coverage(v)]));
}

/**
 * Coverage from the hand labels instead of the rule: an observation is covered when one of
 * its candidate pairs is labelled a match. With every pair labelled the two bounds meet; an
 * observation whose pairs are partly unlabelled counts in `atMost` only.
 */
function handCoverage(items: Array<{ hand: string }>) {
  const atLeast = items.filter((i) => i.hand === 'match').length;
  const open = items.filter((i) => i.hand === 'unlabelled').length;
  return { observations: items.length, atLeast, atMost: atLeast + open, unlabelledObservations: open, coverage: open === 0 ? ratio(atLeast, items.length) : null };
}

export interface ScoreInput {
  observations: GoldObservation[];
  facts: LearnedFact[];
  speakers: Map<string, LocomoSpeakers>;
  /** `<conversation> <dia id>` -> speaker, for every stored turn. */
  turnSpeakers: Map<string, string>;
  turns: number;
  pairLabels: PairLabel[];
  precisionLabels: PrecisionLabel[];
  seed: string;
  pairSample: number;
  precisionSample: number;
}

function speakersOf(input: ScoreInput, conversation: string): LocomoSpeakers {
  const s = input.speakers.get(conversation);
  if (!s) throw new Error(`no speakers for ${conversation}`);
  return s;
}

/** Facts whose subject names one speaker while the turn they came from was said by the other. */
export function wrongSpeakerFacts(input: Pick<ScoreInput, 'facts' | 'speakers' | 'turnSpeakers'>): LearnedFact[] {
  return input.facts.filter((f) => {
    const owner = subjectOwner(f.subject, input.speakers.get(f.conversation)!);
    const said = input.turnSpeakers.get(turnRef(f.conversation, f.sources[0] ?? ''));
    return owner !== undefined && said !== undefined && owner !== said;
  });
}

/**
 * Facts whose subject is a speaker themself ("Melanie", or "user" for speaker A): how many are
 * ABOUT an entity of that speaker's name, and how many are ABOUT the other speaker's instead.
 */
export function speakerEntities(input: Pick<ScoreInput, 'facts' | 'speakers'>): { aboutASpeaker: number; aboutOwnEntity: number; aboutOtherSpeakerEntity: number } {
  const out = { aboutASpeaker: 0, aboutOwnEntity: 0, aboutOtherSpeakerEntity: 0 };
  for (const f of input.facts) {
    const s = input.speakers.get(f.conversation)!;
    const owner = subjectOwner(f.subject, s);
    if (owner === undefined || /['’]s\b/.test(f.subject)) continue;
    const other = owner === s.a ? s.b : s.a;
    const about = new Set(f.about.map((n) => n.toLowerCase()));
    out.aboutASpeaker++;
    if (about.has(owner.toLowerCase()) || (owner === s.a && about.has('user'))) out.aboutOwnEntity++;
    else if (about.has(other.toLowerCase())) out.aboutOtherSpeakerEntity++;
  }
  return out;
}

/** The rule against hand labels: of the labelled pairs in the sample, how often the rule says what the label says. */
export function ruleAgreement(labelled: Array<{ rule: boolean; label: MatchLabel }>) {
  const tp = labelled.filter((x) => x.rule && x.label === 'match').length;
  const fp = labelled.filter((x) => x.rule && x.label === 'no match').length;
  const fn = labelled.filter((x) => !x.rule && x.label === 'match').length;
  const tn = labelled.length - tp - fp - fn;
  return { labelled: labelled.length, tp, fp, fn, tn, precision: ratio(tp, tp + fp), recall: ratio(tp, tp + fn), agreement: ratio(tp + tn, labelled.length) };
}

/** Precision of a sample of facts from hand labels; unlabelled facts are counted, never guessed. */
export function precisionFromLabels(sample: LearnedFact[], labels: PrecisionLabel[]) {
  const byKey = new Map(labels.map((l) => [l.key, l]));
  const found = sample.map((f) => byKey.get(factKey(f))).filter((l): l is PrecisionLabel => l !== undefined);
  const correct = found.filter((l) => l.label === 'correct').length;
  const reasons: Record<string, number> = {};
  for (const l of found) if (l.label === 'wrong') reasons[l.reason] = (reasons[l.reason] ?? 0) + 1;
  return {
    sampled: sample.length,
    labelled: found.length,
    unlabelled: sample.length - found.length,
    unlabelledFacts: sample.filter((f) => !byKey.has(factKey(f))).map(factKey),
    correct,
    wrong: found.length - correct,
    precision: ratio(correct, found.length),
    wrongReasons: reasons,
  };
}

export function scoreObservations(input: ScoreInput) {
  const pairs = candidatePairs(input.observations, input.facts).map((p) => ({ ...p, rule: ruleMatch(p.o, p.f, speakersOf(input, p.o.conversation)) }));
  const pairLabels = new Map(input.pairLabels.map((l) => [l.pair, l.label]));
  const perObservation = input.observations.map((o) => {
    const mine = pairs.filter((p) => p.o === o);
    const s = speakersOf(input, o.conversation);
    const labels = mine.map((p) => pairLabels.get(pairKey(p.o, p.f)));
    const hand = labels.includes('match') ? 'match' : labels.includes(undefined) ? 'unlabelled' : 'no match';
    return { o, covered: mine.some((p) => p.rule.match), candidate: mine.length > 0, hand, role: o.speaker === s.a ? 'speaker_a' : 'speaker_b', cls: observationClass(o.text) };
  });

  const goldTurns = new Set(input.observations.flatMap((o) => o.evidence.map((d) => turnRef(o.conversation, d))));
  const noGold = input.facts.filter((f) => f.sources.every((s) => !goldTurns.has(turnRef(f.conversation, s))));
  const saidBy = (f: LearnedFact) => (input.turnSpeakers.get(turnRef(f.conversation, f.sources[0] ?? '')) === speakersOf(input, f.conversation).a ? 'speaker_a' : 'speaker_b');
  const wrong = wrongSpeakerFacts(input);

  const pairSample = sampleByHash(pairs, (p) => pairKey(p.o, p.f), input.pairSample, input.seed);
  const labelledPairs = pairSample.filter((p) => pairLabels.has(pairKey(p.o, p.f))).map((p) => ({ rule: p.rule.match, label: pairLabels.get(pairKey(p.o, p.f))! }));
  const precisionSample = sampleByHash(input.facts, factKey, input.precisionSample, input.seed);

  return {
    coverage: {
      overall: coverage(perObservation),
      bySpeakerRole: groupCoverage(perObservation, (x) => x.role),
      bySpeaker: groupCoverage(perObservation, (x) => `${x.o.conversation} ${x.o.speaker}`),
      byClass: groupCoverage(perObservation, (x) => x.cls),
      byHandLabels: {
        overall: handCoverage(perObservation),
        bySpeakerRole: Object.fromEntries(['speaker_a', 'speaker_b'].map((r) => [r, handCoverage(perObservation.filter((x) => x.role === r))])),
      },
    },
    facts: {
      total: input.facts.length,
      turns: input.turns,
      perTurn: ratio(input.facts.length, input.turns),
      bySourceSpeaker: countBy(input.facts.map(saidBy)),
      fromTurnsWithoutGoldObservation: noGold.length,
      shareFromTurnsWithoutGoldObservation: ratio(noGold.length, input.facts.length),
      wrongSpeaker: wrong.length,
      wrongSpeakerFacts: wrong.map(factKey),
      speakerEntities: speakerEntities(input),
      byPredicate: countBy(input.facts.map((f) => f.predicate)),
    },
    matchRule: {
      candidatePairs: pairs.length,
      ruleMatches: pairs.filter((p) => p.rule.match).length,
      sampled: pairSample.length,
      unlabelled: pairSample.length - labelledPairs.length,
      vsHandLabels: ruleAgreement(labelledPairs),
    },
    precision: {
      ...precisionFromLabels(precisionSample, input.precisionLabels),
      bySourceSpeaker: Object.fromEntries(
        ['speaker_a', 'speaker_b'].map((who) => {
          const { unlabelledFacts: _u, ...p } = precisionFromLabels(
            precisionSample.filter((f) => saidBy(f) === who),
            input.precisionLabels,
          );
          return [who, p];
        }),
      ),
    },
    samples: { pairs: pairSample, allPairs: pairs, facts: precisionSample },
    covered: perObservation.filter((x) => x.covered).map((x) => x.o),
  };
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([, a], [, b]) => b - a));
}
