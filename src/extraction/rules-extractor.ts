import * as chrono from 'chrono-node';
import nlp from 'compromise';
import { calibrate } from './calibration';
import type { Certainty, EntityType, ExtractedEntity, ExtractedFact, ExtractedRelationship, ExtractionResult, ExtractionTurn, ExtractionWindow, Extractor, TemporalTag } from './contract';

/**
 * The offline extractor, and the default: the service learns with no LLM. Names, places
 * and organizations come from `compromise` (a part-of-speech tagger with name lexicons),
 * dates from `chrono-node`; a handful of first-person patterns turn statements into facts
 * ("I work at", "I live in", "I like/love/prefer/hate", "my sister is", "my name is"),
 * and correction openers ("actually", "no, I meant") mark corrections.
 *
 * First-person facts are taken from user turns only ("I" in an assistant turn is the agent).
 */

/** Kinship and social roles that make "my X is NAME" a person; the single ones become aliases ("my boss"). */
const ROLES = new Set([
  'sister',
  'brother',
  'mom',
  'mother',
  'dad',
  'father',
  'wife',
  'husband',
  'partner',
  'boss',
  'manager',
  'friend',
  'son',
  'daughter',
  'colleague',
  'coworker',
  'girlfriend',
  'boyfriend',
  'fiance',
  'fiancee',
  'cousin',
  'aunt',
  'uncle',
  'grandma',
  'grandmother',
  'grandpa',
  'grandfather',
  'roommate',
  'neighbor',
  'mentor',
  'teacher',
  'therapist',
  'doctor',
  'dog',
  'cat',
]);
const SINGLE_ROLES = new Set(['mom', 'mother', 'dad', 'father', 'wife', 'husband', 'partner', 'boss', 'manager', 'fiance', 'fiancee', 'girlfriend', 'boyfriend', 'therapist', 'roommate']);
const PETS = new Set(['dog', 'cat']);

/** Capitalized words that are not names when they stand alone. */
const NOT_NAMES = new Set([
  'i',
  'im',
  'hey',
  'hi',
  'hello',
  'thanks',
  'thank',
  'yes',
  'yeah',
  'yep',
  'no',
  'nope',
  'ok',
  'okay',
  'wow',
  'oh',
  'omg',
  'lol',
  'sure',
  'good',
  'great',
  'nice',
  'cool',
  'awesome',
  'congrats',
  'congratulations',
  'sorry',
  'well',
  'so',
  'and',
  'but',
  'the',
  'a',
  'my',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
  'today',
  'tomorrow',
  'yesterday',
  'god',
  'mom',
  'dad',
  'mum',
  'bro',
  'dude',
  'buddy',
  'man',
  'guys',
  'love',
  'xoxo',
  'haha',
  'hahaha',
  'definitely',
  'totally',
  'absolutely',
  'lgbtq',
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
  'christmas',
  'easter',
  'halloween',
  'thanksgiving',
  'pride',
  'st',
  'mt',
  'dr',
  'mr',
  'mrs',
  'ms',
  'jr',
  'sr',
]);
/** Words that begin one place's name ("St. Mary's", "Mount Hood"), not a place and a person. */
const PLACE_WORDS = String.raw`(?:St\.?|Saint|Mt\.?|Mount|Fort|Lake|San|Santa)`;
const PLACE_PREFIX = new RegExp(String.raw`^${PLACE_WORDS}\s+[A-Z]`);
/** The same words ending a text, as compromise may leave them out of the name after them. */
const PLACE_PREFIX_BEFORE = new RegExp(String.raw`\b${PLACE_WORDS}\s+$`);
const PLACE_PREPOSITIONS = /\b(?:in|to|from|at|near|visit(?:ed|ing)?|around|across|through)\s+(?:the\s+)?$/i;
// Sentence openers; only "actually", "correction" or "I meant" make it a correction ("No, thanks" does not).
const CORRECTION_OPENER = /^\s*(?:(?:actually|correction|sorry|oops|wait|well|no|nope)\b[\s,:;.!-]*)+(?:i\s+meant\b[\s,:-]*)?|^\s*i\s+meant\b[\s,:-]*/i;
const HEDGE = /\b(?:i think|i guess|maybe|probably|perhaps|might|not sure)\b/i;
const PAST = /\b(?:used to|previously|formerly|back then|no longer|anymore|years? ago)\b/i;
const FUTURE = /\b(?:will|going to|gonna|'ll|plan(?:ning)? to|about to|next (?:week|month|year)|soon)\b/i;

interface Pattern {
  re: RegExp;
  relation: string;
  singleValued: boolean;
  polarity?: 'positive' | 'negative';
  certainty: Certainty;
  temporal?: TemporalTag;
  objectType?: EntityType;
  /** The object is a common-noun phrase ("a nurse"), cut before "at"/"for"/"in", not a name. */
  title?: boolean;
  /** Other patterns may also match the sentence ("I work as a nurse at X": a title and an employer). */
  partial?: boolean;
  claim: (subject: string, object: string) => string;
}

// Each pattern captures the object as group 1; order matters (more specific first).
const PATTERNS: Pattern[] = [
  { re: /\bmy name is\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)/, relation: 'name', singleValued: true, certainty: 'explicit', claim: (s, o) => `${s}'s name is ${o}` },
  {
    re: /\bi used to work (?:at|for)\s+(.+)/i,
    relation: 'works_at',
    singleValued: true,
    certainty: 'explicit',
    temporal: 'past',
    objectType: 'organization',
    claim: (s, o) => `${s} used to work at ${o}`,
  },
  {
    re: /\bi(?:'m| am)? (?:going to|gonna|will) (?:start )?work(?:ing)? (?:at|for)\s+(.+)/i,
    relation: 'works_at',
    singleValued: true,
    certainty: 'explicit',
    temporal: 'future',
    objectType: 'organization',
    claim: (s, o) => `${s} will work at ${o}`,
  },
  {
    re: /\bi(?:'m| am)? (?:now )?work(?:ing|s)? (?:at|for)\s+(.+)/i,
    relation: 'works_at',
    singleValued: true,
    certainty: 'explicit',
    objectType: 'organization',
    claim: (s, o) => `${s} works at ${o}`,
  },
  {
    re: /\bi (?:just )?(?:got a job|started (?:a new job|working)) (?:at|with)\s+(.+)/i,
    relation: 'works_at',
    singleValued: true,
    certainty: 'implied',
    objectType: 'organization',
    claim: (s, o) => `${s} works at ${o}`,
  },
  { re: /\bi(?:'m| am)? work(?:ing)? as (?:an? )?(.+)/i, relation: 'job_title', singleValued: true, certainty: 'explicit', title: true, partial: true, claim: (s, o) => `${s} works as ${o}` },
  {
    re: /\bi(?:'m| am)? work(?:ing)? as (?:an? )?[\w -]+? (?:at|for)\s+(.+)/i,
    relation: 'works_at',
    singleValued: true,
    certainty: 'explicit',
    objectType: 'organization',
    claim: (s, o) => `${s} works at ${o}`,
  },
  {
    re: /\bi(?:'m| am) an? ((?:software |senior |junior )?(?:engineer|developer|teacher|nurse|doctor|designer|student|counselor|artist|writer|manager|lawyer|chef))\b/i,
    relation: 'job_title',
    singleValued: true,
    certainty: 'explicit',
    claim: (s, o) => `${s} is a ${o}`,
  },
  { re: /\bi used to live in\s+(.+)/i, relation: 'lives_in', singleValued: true, certainty: 'explicit', temporal: 'past', objectType: 'place', claim: (s, o) => `${s} used to live in ${o}` },
  { re: /\bi(?:'m| am)? (?:now )?liv(?:e|ing) in\s+(.+)/i, relation: 'lives_in', singleValued: true, certainty: 'explicit', objectType: 'place', claim: (s, o) => `${s} lives in ${o}` },
  { re: /\bi(?:'ve| have)? (?:just )?moved to\s+(.+)/i, relation: 'lives_in', singleValued: true, certainty: 'implied', objectType: 'place', claim: (s, o) => `${s} lives in ${o}` },
  { re: /\bi(?:'m| am) (?:originally )?from\s+(.+)/i, relation: 'from', singleValued: true, certainty: 'explicit', objectType: 'place', claim: (s, o) => `${s} is from ${o}` },
  {
    re: /\bi (?:really |absolutely |just |also |totally )*(?:don't|do not|doesn't) (?:really )?(?:like|love|enjoy)\s+(.+)/i,
    relation: 'likes',
    singleValued: false,
    polarity: 'negative',
    certainty: 'explicit',
    claim: (s, o) => `${s} does not like ${o}`,
  },
  {
    re: /\bi (?:really |absolutely |just |also |totally )*(?:hate|dislike|can't stand|cannot stand|detest)\s+(.+)/i,
    relation: 'likes',
    singleValued: false,
    polarity: 'negative',
    certainty: 'explicit',
    claim: (s, o) => `${s} dislikes ${o}`,
  },
  { re: /\bi (?:really |absolutely |just |also |totally )*(?:prefer)\s+(.+)/i, relation: 'prefers', singleValued: false, certainty: 'explicit', claim: (s, o) => `${s} prefers ${o}` },
  { re: /\bi (?:really |absolutely |just |also |totally )*(?:like|love|enjoy|adore)\s+(.+)/i, relation: 'likes', singleValued: false, certainty: 'explicit', claim: (s, o) => `${s} likes ${o}` },
  { re: /\bmy favou?rite\s+\w+\s+is\s+(.+)/i, relation: 'likes', singleValued: false, certainty: 'explicit', claim: (s, o) => `${s}'s favorite is ${o}` },
  { re: /\bi(?:'m| am) (?:really )?(?:into|a fan of|passionate about|keen on)\s+(.+)/i, relation: 'likes', singleValued: false, certainty: 'implied', claim: (s, o) => `${s} is into ${o}` },
];

// "my sister Alice", "my sister is Alice", "my sister, Alice," / "Alice, my sister"
const ROLE_BEFORE = /\b[Mm]y\s+(?:(?:older|younger|little|big|best|new|old)\s+)?([a-z]+)(?:\s+is|,|\s+named|\s+called|'s name is)?\s+([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)/g;
const ROLE_AFTER = /\b([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?),?\s+(?:is\s+)?[Mm]y\s+(?:(?:older|younger|little|big|best|new|old)\s+)?([a-z]+)\b/g;
// "named Biscuit", "called Max"
const NAMED = /\b(?:named|called)\s+([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)/g;

export interface RulesExtractorOptions {
  /** Extract first-person facts from assistant turns too (both LoCoMo speakers are people). */
  factsFromAllRoles?: boolean;
}

export class RulesExtractor implements Extractor {
  readonly provider = 'rules' as const;
  readonly model = 'rules-v1';
  constructor(private readonly opts: RulesExtractorOptions = {}) {}

  async extract(window: ExtractionWindow): Promise<ExtractionResult> {
    const t0 = performance.now();
    const entities = new EntityBag();
    const facts: ExtractedFact[] = [];
    const relationships: ExtractedRelationship[] = [];
    for (const turn of window.turns) {
      if (turn.role === 'system' || turn.role === 'tool') continue;
      const speaker = cleanName(turn.speaker ?? (turn.role === 'user' ? (window.userName ?? 'user') : 'assistant'));
      const firstPerson = turn.role === 'user' || this.opts.factsFromAllRoles === true;
      if (firstPerson) entities.add({ name: speaker, type: 'person', aliases: [] });
      for (const sentence of splitSentences(turn.content)) {
        mentions(sentence, entities);
        if (!firstPerson) continue;
        extractFacts(sentence, speaker, turn, facts, entities, relationships);
      }
    }
    return {
      entities: entities.list(),
      facts: dedupeFacts(facts),
      relationships,
      repairs: [],
      usage: { provider: 'rules', model: this.model, inputTokens: 0, outputTokens: 0, costUsd: 0, latencyMs: performance.now() - t0 },
    };
  }
}

/** How names compare: case and dots aside ("St. Mary" is "st mary"). */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/\./g, '');
}

/** Entities by case-insensitive name; a later, more specific type wins over `other`. */
class EntityBag {
  private readonly byKey = new Map<string, ExtractedEntity>();
  /** `authoritative`: the type comes from a pattern ("I work at X"), not a guess, and replaces a guessed one. */
  add(e: ExtractedEntity, authoritative = false): void {
    if (!isName(e.name)) return;
    const key = nameKey(e.name);
    const found = this.byKey.get(key);
    if (!found) {
      this.byKey.set(key, { ...e, aliases: [...e.aliases] });
      return;
    }
    if ((found.type === 'other' || authoritative) && e.type !== 'other') found.type = e.type;
    for (const a of e.aliases) if (!found.aliases.includes(a)) found.aliases.push(a);
    if (!found.description && e.description) found.description = e.description;
  }
  has(name: string): boolean {
    return this.byKey.has(nameKey(name));
  }
  list(): ExtractedEntity[] {
    return [...this.byKey.values()];
  }
}

function splitSentences(text: string): string[] {
  return (nlp(text).sentences().out('array') as string[]).map((s) => s.trim()).filter((s) => s.length > 0);
}

interface JsonMatch {
  terms?: Array<{ text: string; tags?: string[] }>;
}

function matchTexts(view: { json: () => unknown }): Array<{ text: string; tags: string[] }> {
  return (view.json() as JsonMatch[]).map((m) => ({
    text: cleanName((m.terms ?? []).map((t) => t.text).join(' ')),
    tags: (m.terms ?? []).flatMap((t) => t.tags ?? []),
  }));
}

/** Trims punctuation, possessives and leading role/lowercase words: "sister Alice," -> "Alice". */
export function cleanName(raw: string): string {
  let s = raw.replace(/[’]/g, "'").replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  s = s.replace(/'s$/i, '');
  const words = s.split(/\s+/);
  while (words.length > 1 && /^[a-z]/.test(words[0]!)) words.shift();
  return words.join(' ').trim();
}

function isName(name: string): boolean {
  if (name.length < 2 || name.length > 80) return false;
  if (name === 'user') return true;
  if (!/^[\p{Lu}\p{N}]/u.test(name)) return false;
  return !NOT_NAMES.has(name.toLowerCase().replace(/[^a-z]/g, ''));
}

/** Names, places and organizations mentioned in one sentence. */
function mentions(sentence: string, bag: EntityBag): void {
  const doc = nlp(sentence);
  const typed = new Set<string>();
  const proper = doc.match('#ProperNoun+');
  // "St. Mary's" is one place: compromise would make a place "St" and a person "Mary".
  for (const span of proper.out('array') as string[]) {
    const name = cleanName(span);
    if (!PLACE_PREFIX.test(name)) continue;
    bag.add({ name, type: 'place', aliases: [] });
    for (const w of name.split(/\s+/)) typed.add(nameKey(cleanName(w)));
    typed.add(nameKey(name));
  }
  for (const m of matchTexts(doc.people())) {
    if (typed.has(nameKey(m.text))) continue;
    bag.add({ name: m.text, type: 'person', aliases: [] });
    typed.add(nameKey(m.text));
  }
  for (const m of matchTexts(doc.places())) {
    if (typed.has(nameKey(m.text))) continue;
    bag.add({ name: m.text, type: 'place', aliases: [] });
    typed.add(nameKey(m.text));
  }
  for (const m of matchTexts(doc.organizations())) {
    if (typed.has(nameKey(m.text))) continue;
    bag.add({ name: m.text, type: 'organization', aliases: [] });
    typed.add(nameKey(m.text));
  }
  for (const [, role, name] of sentence.matchAll(ROLE_BEFORE)) {
    if (!ROLES.has(role!) || !isName(cleanName(name!))) continue;
    const n = cleanName(name!);
    bag.add({ name: n, type: PETS.has(role!) ? 'other' : 'person', aliases: SINGLE_ROLES.has(role!) ? [`my ${role}`] : [], description: `my ${role}` });
    typed.add(nameKey(n));
  }
  for (const [, name, role] of sentence.matchAll(ROLE_AFTER)) {
    if (!ROLES.has(role!) || !isName(cleanName(name!))) continue;
    const n = cleanName(name!);
    bag.add({ name: n, type: PETS.has(role!) ? 'other' : 'person', aliases: SINGLE_ROLES.has(role!) ? [`my ${role}`] : [], description: `my ${role}` });
    typed.add(nameKey(n));
  }
  for (const [, name] of sentence.matchAll(NAMED)) {
    const n = cleanName(name!);
    if (!typed.has(nameKey(n))) bag.add({ name: n, type: 'other', aliases: [] });
    typed.add(nameKey(n));
  }
  // Proper nouns compromise did not type: a place after "in/to/from...", else a concept.
  for (const m of proper.json({ offset: true }) as Array<JsonMatch & { offset?: { start: number } }>) {
    const name = cleanName((m.terms ?? []).map((t) => t.text).join(' '));
    if (!isName(name) || typed.has(nameKey(name))) continue;
    const tags = (m.terms ?? []).flatMap((t) => t.tags ?? []);
    const before = sentence.slice(0, m.offset?.start ?? 0);
    const sentenceStart = before.trim() === '' || /[,:;!?]\s*$/.test(before);
    if (tags.includes('Person') || tags.includes('FirstName')) bag.add({ name, type: 'person', aliases: [] });
    else if (PLACE_PREPOSITIONS.test(before)) bag.add({ name, type: 'place', aliases: [] });
    else if (!sentenceStart) bag.add({ name, type: 'other', aliases: [] });
  }
}

// A clause ends at punctuation (not the dot of "St." or "Dr.") or a conjunction; a title also
// before a preposition ("nurse at St. Mary's" -> "nurse").
const CLAUSE_BREAK = /(?<!\b(?:St|Mt|Dr|Mr|Mrs|Ms|Jr|Sr|Prof|Inc|Ltd|Co))\.|[,;!?()]|\s(?:and|but|because|since|so|when|with|where|which|who|as|though|although|if|or)\s/i;
const TITLE_BREAK = /\s(?:at|for|in|on|from|with)\s/i;

/** Dates that say when (a day, month, year or weekday), not a bare part of the day ("night shifts"). */
function datesIn(text: string, refDate: Date): chrono.ParsedResult[] {
  return chrono.parse(text, refDate).filter((d) => (['year', 'month', 'day', 'weekday'] as const).some((c) => d.start.isCertain(c)));
}

/**
 * The object phrase of a pattern: up to the first clause break, at most 6 words, preferring
 * a proper noun inside it; a title is the common-noun phrase itself.
 */
function objectPhrase(raw: string, refDate: Date, title = false): string {
  let text = raw;
  // Dates are validity, not part of the value: "Stripe next month" -> "Stripe".
  for (const d of datesIn(raw, refDate)) text = text.replace(d.text, ' ');
  let clause = text.split(CLAUSE_BREAK)[0] ?? '';
  if (title) clause = clause.split(TITLE_BREAK)[0] ?? '';
  const proper = title ? [] : (nlp(clause).match('#ProperNoun+').out('array') as string[]);
  if (proper.length > 0) {
    const at = clause.indexOf(proper[0]!);
    const prefix = PLACE_PREFIX_BEFORE.exec(clause.slice(0, Math.max(at, 0)))?.[0] ?? '';
    return cleanName(prefix + proper[0]!);
  }
  const words = clause.trim().split(/\s+/).slice(0, 6);
  return words
    .join(' ')
    .replace(/^(?:the|a|an|my|to|some)\s+/i, '')
    .replace(/[^\p{L}\p{N}]+$/u, '')
    .trim();
}

function temporalOf(sentence: string, fallback: TemporalTag | undefined): TemporalTag {
  if (fallback) return fallback;
  if (PAST.test(sentence)) return 'past';
  if (FUTURE.test(sentence)) return 'future';
  return 'current';
}

function extractFacts(sentence: string, speaker: string, turn: ExtractionTurn, facts: ExtractedFact[], bag: EntityBag, rels: ExtractedRelationship[]): void {
  const opener = CORRECTION_OPENER.exec(sentence);
  const isCorrection = opener !== null && /\b(?:actually|correction|meant)\b/i.test(opener[0]);
  const body = opener ? sentence.slice(opener[0].length) : sentence;
  const hedged = HEDGE.test(sentence);
  const refDate = new Date(turn.timestamp);
  const before = facts.length;

  for (const p of PATTERNS) {
    const m = p.re.exec(body);
    if (!m) continue;
    const object = objectPhrase(m[1]!, refDate, p.title);
    if (object === '' || object.split(/\s+/).length > 6) continue;
    // Dates said in the same clause as the statement ("moved to Berlin last year") bound its validity.
    const when = datesIn(m[0], refDate)[0]?.start.date().toISOString();
    const temporal = temporalOf(sentence, p.temporal);
    const certainty: Certainty = hedged ? 'uncertain' : p.certainty;
    facts.push({
      claim: p.claim(speaker, object),
      subject: speaker,
      relation: p.relation,
      object,
      polarity: p.polarity ?? 'positive',
      singleValued: p.singleValued,
      certainty,
      confidence: calibrate(certainty),
      temporal,
      isCorrection,
      sourceTurnId: turn.id,
      validFrom: temporal === 'past' ? undefined : when,
      validTo: temporal === 'past' ? when : undefined,
    });
    if (p.objectType) {
      bag.add({ name: object, type: p.objectType, aliases: [] }, true);
      if (bag.has(object) && /^[\p{Lu}\p{N}]/u.test(object)) {
        rels.push({ source: speaker, target: object, type: p.objectType === 'organization' ? 'WORKS_FOR' : 'LOCATED_IN', properties: { temporal }, sourceTurnId: turn.id });
      }
    }
    if (!p.partial) break; // one pattern per sentence: the first (most specific) wins
  }

  const roleMatches = [...body.matchAll(ROLE_BEFORE)].map(([, role, name]) => [role!, name!] as const).concat([...body.matchAll(ROLE_AFTER)].map(([, name, role]) => [role!, name!] as const));
  for (const [role, rawName] of roleMatches) {
    const name = cleanName(rawName);
    if (!ROLES.has(role) || !isName(name)) continue;
    const certainty: Certainty = hedged ? 'uncertain' : 'explicit';
    facts.push({
      claim: `${speaker}'s ${role} is ${name}`,
      subject: speaker,
      relation: role,
      object: name,
      polarity: 'positive',
      singleValued: SINGLE_ROLES.has(role),
      certainty,
      confidence: calibrate(certainty),
      temporal: temporalOf(sentence, undefined),
      isCorrection,
      sourceTurnId: turn.id,
    });
    if (!PETS.has(role)) rels.push({ source: speaker, target: name, type: 'KNOWS', properties: { role }, sourceTurnId: turn.id });
  }

  // "No, I meant Vitaly": no pattern matched, so the correction re-states the previous
  // single-valued fact of the window with the new value.
  if (isCorrection && facts.length === before) {
    const prev = [...facts].reverse().find((f) => f.subject === speaker && f.singleValued);
    const object = objectPhrase(body.replace(/^\s*(?:it'?s|it is|is)\s+/i, ''), refDate);
    if (prev && object !== '' && object.toLowerCase() !== prev.object?.toLowerCase()) {
      facts.push({ ...prev, claim: prev.claim.replace(prev.object ?? '', object), object, isCorrection: true, sourceTurnId: turn.id, certainty: 'explicit', confidence: calibrate('explicit') });
    }
  }
}

/** Same subject, relation, object and polarity from one window: keep the last statement. */
function dedupeFacts(facts: ExtractedFact[]): ExtractedFact[] {
  const byKey = new Map<string, ExtractedFact>();
  for (const f of facts) byKey.set([f.subject, f.relation, f.object ?? '', f.polarity].join('\u0000').toLowerCase(), f);
  return [...byKey.values()];
}

export type { ExtractionTurn };
