import * as chrono from 'chrono-node';
import nlp from 'compromise';
import { calibrate } from './calibration';
import type { Certainty, EntityType, ExtractedEntity, ExtractedFact, ExtractedRelationship, ExtractionResult, ExtractionTurn, ExtractionWindow, Extractor, TemporalTag } from './contract';
import { CONDITIONS, DIETS, NOT_VALUES, OCCUPATIONS, PET_PATTERN, PET_WORDS, ROLE_PREDICATE, SINGLE_VALUED, STATE_CONDITIONS } from './rules-lexicon';

/**
 * The offline extractor, and the default: the service learns with no LLM. Names, places
 * and organizations come from `compromise` (a part-of-speech tagger with name lexicons),
 * dates from `chrono-node`, verb forms from compromise too ("visiting" -> "visit").
 *
 * Facts come from patterns over clauses (a sentence split at commas and conjunctions that
 * start a new clause), grouped by what people tell assistants: jobs and employers, homes and
 * moves, family, pets, possessions, health, diet and allergies, preferences, plans and
 * schedules, goals, activities. Changes of state ("I quit", "I left X", "no longer",
 * "sold", "broke up", "stopped", "gave up", "passed away") produce a past fact marked
 * `ends`, which closes the current one when it is applied; "actually" / "I meant" /
 * "correction" mark corrections. Questions, conditionals, wishes and hedges ("maybe",
 * "I think", "thinking of", "not sure") give no fact; a negated statement gives none either,
 * except where the negation is the content (a dislike, a food someone does not eat).
 *
 * Subjects: first person is the speaker (user turns only: "I" in an assistant turn is the
 * agent); "my sister" is the sister's name when the window gave it ("my sister Alice",
 * "Her name is Giulia"), else "user's sister"; a clause opened by a known name ("Ben moved
 * to Lisbon") is about that person. "I'm Dana" / "my name is Dana" makes Dana an alias of
 * the speaker, never a second person.
 */

const NOT_NAMES = new Set(
  (
    'i im ive ill id hey hi hello thanks thank yes yeah yep no nope ok okay wow oh omg lol sure good great nice cool awesome congrats congratulations ' +
    'sorry well so and but the a my our monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday god mom dad mum bro dude buddy ' +
    'man guys love xoxo haha hahaha definitely totally absolutely lgbtq january february march april may june july august september october november ' +
    'december christmas easter halloween thanksgiving pride st mt dr mr mrs ms jr sr actually also maybe correction imagine both'
  ).split(' '),
);
const PLACE_WORDS = String.raw`(?:St\.?|Saint|Mt\.?|Mount|Fort|Lake|San|Santa)`;
const PLACE_PREFIX = new RegExp(String.raw`^${PLACE_WORDS}\s+[A-Z]`);
const PLACE_PREFIX_BEFORE = new RegExp(String.raw`\b${PLACE_WORDS}\s+$`);
const PLACE_PREPOSITIONS = /\b(?:in|to|from|at|near|visit(?:ed|ing)?|around|across|through)\s+(?:the\s+)?$/i;
const HONORIFIC = /^(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+/;

// Sentence openers; only "actually", "correction" or "I meant" make it a correction ("No, thanks" does not).
const OPENER =
  /^\s*(?:(?:actually|correction|sorry|oops|wait|well|no|nope|oh|also|so|and|but|ok|okay|yes|yeah|hi|hello|hey|good|great)\b[\s,:;.!-]*)+(?:i\s+meant\b[\s,:-]*)?|^\s*i\s+meant\b[\s,:-]*/i;
/** Statements about what is not (yet) so: no fact at all. */
const STRONG_HEDGE =
  /\b(?:i think|i don't think|i guess|maybe|might|perhaps|not sure|unsure|thinking (?:of|about)|considering|wondering|i wish|wish i|imagine|if i|what if|could|would|should|i doubt|doubt i|who knows|someday|some day)\b|\bi'd (?!like to|love to|rather)/i;
const SOFT_HEDGE = /\b(?:probably|likely|i believe|i suppose)\b/i;
const NEGATION = /\b(?:not|never|no longer|nobody|no one|nothing|don't|doesn't|didn't|isn't|aren't|wasn't|haven't|hasn't|can't|cannot|won't|dont|doesnt)\b|\bno\s+(?!wait\b)/i;
const ANYMORE = /\b(?:any ?more|no longer)\b/i;
const FUTURE =
  /\b(?:will|going to|gonna|'ll|plan(?:ning)? to|about to|next (?:week|month|year|summer|spring|fall|autumn|winter)|starting (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|next|tomorrow))\b/i;
const ARTICLE = /^(?:the|a|an|my|our|some|his|her|their)\s+/i;

/** What a pattern states; the extractor adds subject, certainty, dates and provenance. */
interface Stated {
  relation: string;
  object?: string;
  polarity?: 'positive' | 'negative';
  temporal?: TemporalTag;
  /** The statement ends the current value (this object, or every value when there is none). */
  ends?: boolean;
  certainty?: Certainty;
  objectType?: EntityType;
  /** The claim's wording when the default ("<s> <relation> <o>") reads badly. */
  claim?: (s: string, o: string) => string;
}

interface ClauseContext {
  /** The clause in first-person form ("My brother lives in Oslo" -> "I live in Oslo"). */
  text: string;
  refDate: Date;
  /** Objects said earlier in the sentence, for "it" ("my wife loves opera but I find it boring"). */
  lastObject?: string;
  /** Relations already stated in the window (to read "switched to X" as a diet, phone or employer). */
  recent: string[];
}

type Rule = { re: RegExp; negated?: boolean; make: (m: RegExpExecArray, c: ClauseContext) => Stated[] };

const O = String.raw`(.+)`;
const ADV = String.raw`(?:(?:just|also|really|now|currently|recently|finally|actually|still|mostly|usually|remotely|full[- ]time|part[- ]time)\s+)*`;
const AM = String.raw`(?:'m|\s+am)`;
const HAVE = String.raw`(?:'ve|\s+have)`;

/** Clause rules, most specific first; the first that states something wins (unless it returns `partial`). */
const RULES: Rule[] = [
  // --- identity
  { re: /^[Ii](?:'m| am)\s+([A-Z][a-z]+)\s*[.!]?$/, make: (m) => [{ relation: 'name', object: m[1]!, claim: (s, o) => `${s}'s name is ${o}` }] },
  { re: /\b(?:[Mm]y name is|[Cc]all me)\s+([A-Z][\w'-]*)/, make: (m) => [{ relation: 'name', object: m[1]!, claim: (s, o) => `${s}'s name is ${o}` }] },

  // --- changes of state: jobs
  {
    re: new RegExp(String.raw`\bi ${ADV}(?:quit|left|resigned from)\s+(?:my (?:job|position|role|post)(?:\s+(?:at|with)\s+${O})?|${O})`, 'i'),
    make: (m, c) => {
      const raw = m[1] ?? m[2];
      // "left for our vacation", "left home early": leaving a place, not a job.
      if (raw && /^(?:for|to|home|the (?:house|office|party|room)|early|after|on|at|with|behind|out)\b/i.test(raw)) return [];
      const o = raw ? objectPhrase(raw, c.refDate, { allowCommon: false }) : '';
      if (/^(?:smoking|drinking|sugar|alcohol|caffeine|coffee|vaping)/i.test(raw ?? '')) return [{ relation: 'activity', object: objectPhrase(raw!, c.refDate), ends: true, temporal: 'past' }];
      return [{ relation: 'works_at', object: o || undefined, ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('works at') }];
    },
  },
  {
    // "I quit." / "I just quit, no idea what's next" / "I got laid off": the job ends and no
    // employer is said, so every current one ends and none is invented. The clause must end
    // (or go on with a time) after the verb, so "I quit smoking" stays a habit.
    re: new RegExp(
      String.raw`\bi ${ADV}(?:(?:quit|resigned)(?:\s+(?:today|yesterday|last \w+|this \w+|on \w+|in \w+|\w+ (?:days?|weeks?|months?) ago))?\s*(?:[.!?,;]|$)|(?:got|was|have been|'ve been|just got) (?:laid off|fired|let go|made redundant)\b|lost my job\b)`,
      'i',
    ),
    make: () => [{ relation: 'works_at', ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('works at') }],
  },
  {
    re: /\bi(?:'m| am) (?:now |currently )?(?:unemployed|out of work|between jobs|jobless)\b/i,
    make: () => [{ relation: 'works_at', ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('works at') }],
  },
  {
    re: /\b[Ii](?:'m| am) leaving\s+([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)/,
    make: (m) => [{ relation: 'works_at', object: m[1]!, ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('works at') }],
  },
  {
    re: new RegExp(String.raw`\bi (?:no longer|don't|do not) work (?:at|for)\s+${O}`, 'i'),
    negated: true,
    make: (m, c) =>
      ANYMORE.test(c.text) ? [{ relation: 'works_at', object: objectPhrase(m[1]!, c.refDate), ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('works at') }] : [],
  },
  { re: /\bi(?:'m| am) no longer (?:teaching|working)/i, negated: true, make: () => [{ relation: 'job_title', ends: true, temporal: 'past', claim: (s) => `${s} no longer has that job` }] },
  { re: /\bi (?:just )?retired\b/i, make: () => [{ relation: 'job_title', object: 'retired', claim: (s) => `${s} is retired` }] },
  {
    re: new RegExp(String.raw`\bi graduated from\s+${O}`, 'i'),
    make: (m, c) => [{ relation: 'studies_at', object: objectPhrase(m[1]!, c.refDate), ends: true, temporal: 'past', objectType: 'organization', claim: endClaim('studies at') }],
  },
  {
    re: new RegExp(String.raw`\bi (?:used to|once) work(?:ed)? (?:at|for)\s+${O}`, 'i'),
    make: (m, c) => [{ relation: 'works_at', object: objectPhrase(m[1]!, c.refDate), temporal: 'past', ends: true, objectType: 'organization', claim: (s, o) => `${s} used to work at ${o}` }],
  },
  // --- jobs
  {
    // Case-sensitive, so the name stops at the first lower-case word ("Crumbs in Leeds" is Crumbs).
    re: new RegExp(String.raw`\b[Ii] ${ADV}(?:run|own|started|founded) (?:my own|a|an) ([\w -]+?) (?:called|named)\s+([A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*)*)`),
    make: (m) => [
      { relation: 'works_at', object: m[2]!, objectType: 'organization', claim: (s, o) => `${s} runs ${o}` },
      { relation: 'job_title', object: 'owner', claim: (s) => `${s} owns the business` },
    ],
  },
  {
    re: new RegExp(String.raw`\bi ${ADV}teach ([\w ]+?) at\s+${O}`, 'i'),
    make: (m, c) => [
      { relation: 'works_at', object: objectPhrase(m[2]!, c.refDate), objectType: 'organization' },
      { relation: 'job_title', object: `${m[1]!.trim()} teacher`, claim: (s, o) => `${s} is a ${o}` },
    ],
  },
  {
    re: new RegExp(String.raw`\bi(?:${AM}|${HAVE} been)?\s*${ADV}(?:work(?:ing|s)?|employed) (?:at|for|with)\s+${O}`, 'i'),
    make: (m, c) => {
      const out = employer(m[1]!, c);
      const as = /\bas an? ((?:[\w-]+ ){0,3}[\w-]+)/i.exec(m[1]!);
      if (as && OCCUPATIONS.has(as[1]!.split(' ').pop()!.toLowerCase())) out.push({ relation: 'job_title', object: as[1]!.toLowerCase(), claim: (s, o) => `${s} is a ${o}` });
      return out;
    },
  },
  {
    re: new RegExp(String.raw`\bi ${ADV}(?:got (?:a (?:new )?job|hired|an offer|a position) (?:at|with|by)|joined|started (?:a new job |working |my new job )?(?:at|with)|signed with)\s+${O}`, 'i'),
    make: (m, c) => employer(m[1]!, c, 'implied'),
  },
  {
    re: new RegExp(String.raw`\b(?:[Nn]ow\s+)?[Ii](?:${AM}) (?:now )?(?:at|with)\s+([A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)(?:\s+now)?\s*[.!]?$`),
    make: (m) => [{ relation: 'works_at', object: m[1]!, objectType: 'organization' }],
  },
  { re: /\bi(?:'m| am)? (?:now )?(?:working |work )in ([a-z][\w -]+?)[.!]?$/i, make: (m) => [{ relation: 'works_in', object: m[1]!.trim(), claim: (s, o) => `${s} works in ${o}` }] },
  {
    re: /\bi (?:just )?got promoted to\s+(?:an? )?([\w -]+)/i,
    make: (m, c) => [{ relation: 'job_title', object: objectPhrase(m[1]!, c.refDate, { title: true }), claim: (s, o) => `${s} was promoted to ${o}` }],
  },
  {
    re: /\bi(?:'m| am)? (?:currently )?(?:studying|study|a student)(?: [\w ]+?)? at\s+(.+)/i,
    make: (m, c) => [{ relation: 'studies_at', object: objectPhrase(m[1]!, c.refDate), objectType: 'organization', claim: (s, o) => `${s} studies at ${o}` }],
  },
  {
    re: /\bi(?:'m| am)? (?:work(?:ing)? as|an?) ((?:[\w-]+ ){0,3}?[\w-]+?)(?:\s+(?:at|for|in|with|on|and|but|who|since|from)\b|[,.!;]|$)(.*)$/i,
    make: (m, c) => {
      const title = m[1]!.toLowerCase().trim().replace(ARTICLE, '');
      const head = title.split(' ').pop()!;
      if (!OCCUPATIONS.has(head.replace(/s$/, '')) && !/work(?:ing)? as/i.test(m[0])) return [];
      const out: Stated[] = [{ relation: 'job_title', object: title, claim: (s, o) => `${s} is a ${o}` }];
      const at = /^\s*(?:at|for)\s+(.+)/i.exec(m[0].slice(m[0].toLowerCase().indexOf(title) + title.length));
      if (at) out.push(...employer(at[1]!, c));
      return out;
    },
  },

  // --- homes
  {
    re: /\bi (?:used to|once) live(?:d)? in\s+(.+)/i,
    make: (m, c) => [{ relation: 'lives_in', object: objectPhrase(m[1]!, c.refDate), temporal: 'past', ends: true, objectType: 'place', claim: (s, o) => `${s} used to live in ${o}` }],
  },
  {
    re: /\bi(?:'m| am)? (?:moving|relocating) to\s+(.+)/i,
    make: (m, c) => [{ relation: 'plans', object: `move to ${objectPhrase(m[1]!, c.refDate)}`, temporal: 'future', claim: (s, o) => `${s} plans to ${o}` }],
  },
  {
    re: /\bi(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated)(?: back)? (?:to|into)\s+(.+?)(?:\s+from\s+(.+))?$/i,
    make: (m, c) => {
      const out: Stated[] = [{ relation: 'lives_in', object: objectPhrase(m[1]!, c.refDate), certainty: 'implied', objectType: 'place' }];
      if (m[2]) out.push({ relation: 'lives_in', object: objectPhrase(m[2], c.refDate), temporal: 'past', ends: true, objectType: 'place', claim: (s, o) => `${s} used to live in ${o}` });
      return out;
    },
  },
  {
    re: new RegExp(String.raw`\bi(?:${AM}|${HAVE} been)?\s*${ADV}(?:liv(?:e|ed|ing)|based|settled|staying|stayed) in\s+${O}`, 'i'),
    make: (m, c) => [{ relation: 'lives_in', object: objectPhrase(m[1]!, c.refDate), objectType: 'place' }],
  },
  { re: /\b[Ii](?:'m| am) (?:now )?in\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+now\b/, make: (m) => [{ relation: 'lives_in', object: m[1]!, objectType: 'place' }] },
  { re: /\bi (?:rent|own|have|bought|share) an? (?:[\w-]+ ){0,2}(?:flat|apartment|house|home|condo|studio|place) in\s+(.+)/i, make: (m, c) => homeIn(m, c) },
  { re: /\bi(?:'m| am) (?:originally )?from\s+(.+)/i, make: (m, c) => [{ relation: 'from', object: objectPhrase(m[1]!, c.refDate), objectType: 'place', claim: (s, o) => `${s} is from ${o}` }] },
  { re: /\bi (?:grew up|was born|was raised) in\s+(.+)/i, make: (m, c) => [{ relation: 'from', object: objectPhrase(m[1]!, c.refDate), objectType: 'place', claim: (s, o) => `${s} is from ${o}` }] },

  // --- family and partners: changes
  {
    re: /^([A-Z][a-z]+) and [Ii] (?:broke up|split up|separated|got divorced)/,
    make: (m) => [{ relation: 'partner', object: m[1]!, ends: true, temporal: 'past', claim: (s, o) => `${s} and ${o} broke up` }],
  },
  { re: /\b[Ii] (?:broke up|split up) with\s+([A-Z][a-z]+)/, make: (m) => [{ relation: 'partner', object: m[1]!, ends: true, temporal: 'past', claim: (s, o) => `${s} and ${o} broke up` }] },
  { re: /^([A-Z][a-z]+) broke up with me/, make: (m) => [{ relation: 'partner', object: m[1]!, ends: true, temporal: 'past', claim: (s, o) => `${s} and ${o} broke up` }] },
  { re: /\bwe (?:broke up|split up|separated)\b/i, make: () => [{ relation: 'partner', ends: true, temporal: 'past', claim: (s) => `${s} broke up with their partner` }] },
  {
    re: /^(?:([A-Z][a-z]+) and [Ii]|[Ii]) got married(?: to ([A-Z][a-z]+))?/,
    make: (m) => {
      const who = m[1] ?? m[2];
      if (!who) return [];
      return [
        { relation: 'spouse', object: who, objectType: 'person', claim: (s, o) => `${s} is married to ${o}` },
        { relation: 'partner', object: who, ends: true, temporal: 'past', claim: (s, o) => `${s} and ${o} are no longer just partners` },
      ];
    },
  },
  {
    re: /\b[Ii](?: started| am|'m) dating\s+(?:someone (?:named|called)\s+)?([A-Z][a-z]+)/,
    make: (m) => [{ relation: 'partner', object: m[1]!, objectType: 'person', claim: (s, o) => `${s} is dating ${o}` }],
  },
  { re: /\b[Ii] (?:now )?see (?:Dr\.?|Doctor)\s+([A-Z][a-z]+)/, make: (m) => [{ relation: 'doctor', object: m[1]!, objectType: 'person', claim: (s, o) => `${s}'s doctor is Dr. ${o}` }] },

  // --- possessions and pets: changes
  {
    re: /\bi (?:sold|gave away|got rid of|donated|traded)\s+(?:my |our |the )(.+)/i,
    make: (m, c) => [{ relation: 'owns', object: objectPhrase(m[1]!.split(/\s(?:to|at|for|in|on)\s/)[0]!, c.refDate, { allowCommon: true }), ends: true, temporal: 'past', claim: endClaim('owns') }],
  },
  {
    re: /\bi traded in\s+(?:my |our |the )?(.+?) for\s+(.+)/i,
    make: (m, c) => [
      { relation: 'owns', object: objectPhrase(m[1]!, c.refDate), ends: true, temporal: 'past', claim: endClaim('owns') },
      { relation: 'owns', object: objectPhrase(m[2]!, c.refDate), claim: (s, o) => `${s} owns ${o}` },
    ],
  },
  { re: /^([A-Z][a-z]+) (?:passed away|died|ran away)/, make: (m) => [{ relation: 'pet', object: m[1]!, ends: true, temporal: 'past', claim: (s, o) => `${s}'s pet ${o} died` }] },

  // --- habits and activities: changes
  {
    re: /\bi (?:stopped|quit|gave up|kicked) (?:eating|having)\s+(.+)/i,
    make: (m, c) => [{ relation: 'avoids', object: objectPhrase(m[1]!, c.refDate), claim: (s, o) => `${s} no longer eats ${o}` }],
  },
  {
    re: /\bi (?:finally )?(?:stopped|quit|gave up|kicked)\s+(.+)/i,
    make: (m, c) => {
      const o = objectPhrase(m[1]!.replace(/^(?:playing|doing|going to)\s+/i, ''), c.refDate);
      const diet = DIETS.has(o.toLowerCase()) || /\bdiet\b/i.test(o);
      return [{ relation: diet ? 'diet' : 'activity', object: o.replace(/\s*diet$/i, ''), ends: true, temporal: 'past', claim: (s, x) => `${s} stopped ${x}` }];
    },
  },
  {
    re: /\bmy (\w+(?: \w+)?) is (?:completely |totally |all )?(?:gone|cured|over)\b/i,
    make: (m) => [{ relation: 'has_condition', object: m[1]!, ends: true, temporal: 'past', claim: (s, o) => `${s} no longer has ${o}` }],
  },
  {
    re: /\bi (?:recovered|healed) from\s+(.+)/i,
    make: (m, c) => [{ relation: 'has_condition', object: objectPhrase(m[1]!, c.refDate), ends: true, temporal: 'past', claim: (s, o) => `${s} recovered from ${o}` }],
  },
  {
    re: /\bi (?:don't|do not|no longer) (?:really |actually |even )?(\w+)\s*(.*?)\s*(?:any ?more|these days)\b/i,
    negated: true,
    make: (m, c) => {
      if (/^(?:like|love|enjoy|work|live|have|own|eat)$/i.test(m[1]!)) return [];
      const o = [gerund(m[1]!), objectPhrase(m[2]!, c.refDate)].filter(Boolean).join(' ');
      return [{ relation: 'activity', object: o, ends: true, temporal: 'past', claim: (s, x) => `${s} stopped ${x}` }];
    },
  },
  {
    re: /\bi (?:just )?(?:started|began|took up)\s+(\w+ing\b(?: [a-z]+)?)(.*)$/i,
    make: (m) => [{ relation: 'activity', object: gerundObject(m[1]!, m[2]), claim: (s, o) => `${s} started ${o}` }],
  },

  // --- diet and allergies
  { re: /\bi(?:'m| am) not allergic\b/i, negated: true, make: () => [] },
  {
    re: /\bi(?:'m| am) (?:severely |very |mildly |deathly )?allergic to\s+(.+)/i,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'allergic_to', object: o, claim: (s, x) => `${s} is allergic to ${x}` })),
  },
  {
    re: /\bi(?:'m| am) (?:severely |very )?allergic\s*[.!]?$/i,
    make: (_m, c) => (c.lastObject ? [{ relation: 'allergic_to', object: c.lastObject, claim: (s, x) => `${s} is allergic to ${x}` }] : []),
  },
  {
    re: /\bi (?:have|'ve got|have got) an? (?:severe |bad |mild |serious )?([\w -]+?) allergy/i,
    make: (m) => [{ relation: 'allergic_to', object: m[1]!.replace(ARTICLE, ''), claim: (s, x) => `${s} is allergic to ${x}` }],
  },
  { re: /\bi (?:don't|do not|never|won't) eat\s+(.+)/i, negated: true, make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'avoids', object: o, claim: (s, x) => `${s} does not eat ${x}` })) },
  { re: /\bi (?:try to )?avoid\s+(.+)/i, make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'avoids', object: o, claim: (s, x) => `${s} avoids ${x}` })) },
  {
    re: /\bi (?:switched|changed) (?:over )?to\s+(.+)/i,
    make: (m, c) => {
      const o = objectPhrase(m[1]!, c.refDate);
      const diet = /^(\S+)(?:\s+diet)?$/i.exec(o);
      if (diet && DIETS.has(diet[1]!.toLowerCase())) return [{ relation: 'diet', object: diet[1]!.toLowerCase(), claim: (s, x) => `${s} is ${x}` }];
      if (c.recent.includes('works_at') && /^[A-Z]/.test(o)) return [{ relation: 'works_at', object: o, objectType: 'organization' }];
      return [{ relation: 'owns', object: o, claim: (s, x) => `${s} owns ${x}` }];
    },
  },
  { re: /\bi (?:follow|eat|am on|'m on|keep) an? (\S+) diet/i, make: (m) => [{ relation: 'diet', object: m[1]!.toLowerCase(), claim: (s, x) => `${s} follows a ${x} diet` }] },
  {
    re: /\bi(?:'m| am) (?:now |a |an |strictly |fully )*(\S+?)\b/i,
    make: (m) => (DIETS.has(m[1]!.toLowerCase()) ? [{ relation: 'diet', object: m[1]!.toLowerCase(), claim: (s, x) => `${s} is ${x}` }] : []),
  },

  // --- health
  {
    re: /\bi(?:'ve| have)? (?:been )?(?:was |got |recently )?diagnosed with\s+(.+)/i,
    make: (m, c) => [{ relation: 'has_condition', object: objectPhrase(m[1]!, c.refDate, { allowCommon: true }), claim: (s, o) => `${s} has ${o}` }],
  },
  { re: /\bi (?:suffer|suffered) from\s+(.+)/i, make: (m, c) => [{ relation: 'has_condition', object: objectPhrase(m[1]!, c.refDate), claim: (s, o) => `${s} has ${o}` }] },
  { re: /\bi (?:broke|fractured|sprained|tore|injured|hurt) my\s+(\w+)/i, make: (m) => [{ relation: 'has_condition', object: `broken ${m[1]!}`, claim: (s, o) => `${s} has a ${o}` }] },
  {
    re: /\bi(?:'m| am) ((?:pregnant|diabetic|asthmatic|epileptic|deaf|blind|colou?r ?blind|anemic|anaemic|autistic|dyslexic|\w+ intolerant)\b(?: in my \w+ \w+)?)/i,
    make: (m) =>
      STATE_CONDITIONS.test(m[1]!) ? [{ relation: 'has_condition', object: m[1]!.replace(/(\w+) intolerant/i, '$1 intolerance').replace(/ my /, ' '), claim: (s, o) => `${s} is ${o}` }] : [],
  },
  {
    re: /\bi (?:take|am taking|'m taking|'m on|am on)\s+([a-z][\w-]+)\s+(?:every|each|daily|twice|once|for)\b/i,
    make: (m) => [{ relation: 'takes', object: m[1]!, claim: (s, o) => `${s} takes ${o}` }],
  },

  // --- preferences
  { re: /\bi (?:don't|do not) (?:really |particularly )?(?:hate|mind|dislike)\b/i, negated: true, make: () => [] },
  {
    re: /\bi (?:really |absolutely |just |also |totally )*(?:don't|do not|doesn't) (?:really |particularly )?(?:like|enjoy|care for)\s+(.+)/i,
    negated: true,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'likes', object: o, polarity: 'negative', claim: (s, x) => `${s} does not like ${x}` })),
  },
  {
    re: /\bi(?:'m| am) not (?:a |really a |the )?(?:big |huge )?fan of\s+(.+)/i,
    negated: true,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'likes', object: o, polarity: 'negative', claim: (s, x) => `${s} does not like ${x}` })),
  },
  {
    re: /\bi (?:really |absolutely |just |also |totally )*(?:hate|dislike|can't stand|cannot stand|detest|loathe)\s+(.+)/i,
    negated: true,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'likes', object: o, polarity: 'negative', claim: (s, x) => `${s} dislikes ${x}` })),
  },
  {
    re: /\bi find\s+(.+?)\s+(?:boring|annoying|awful|terrible|dull|overrated)\b/i,
    make: (m, c) => one(m[1]!, c, (o) => ({ relation: 'likes', object: o, polarity: 'negative', claim: (s, x) => `${s} dislikes ${x}` })),
  },
  {
    re: /\bi'd rather\s+(.+?)(?:\s+than\b.*)?$/i,
    make: (m, c) => one(m[1]!.replace(/^(?:take|have|go with|use)\s+/i, ''), c, (o) => ({ relation: 'prefers', object: o, claim: (s, x) => `${s} prefers ${x}` })),
  },
  {
    re: /\bi (?:really |absolutely |just |also |totally |much |generally |always )*prefer\s+(.+)/i,
    make: (m, c) => one(m[1]!, c, (o) => ({ relation: 'prefers', object: o, claim: (s, x) => `${s} prefers ${x}` })),
  },
  { re: /\bmy favou?rite\s+[\w ]+?\s+(?:is|are)\s+(.+)/i, make: (m, c) => one(m[1]!, c, (o) => ({ relation: 'likes', object: o, claim: (s, x) => `${s}'s favorite is ${x}` })) },
  {
    re: /\bi (?:really |absolutely |just |also |totally |still )*(?:like|love|enjoy|adore)\s+(?!to\b)(.+)/i,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'likes', object: o, claim: (s, x) => `${s} likes ${x}` })),
  },
  {
    re: /\bi(?:'m| am) (?:really |very |super |a (?:big |huge )?fan of|big into)*\s*(?:into|a fan of|passionate about|keen on|obsessed with)\s+(.+)/i,
    make: (m, c) => list(m[1]!, c).map((o) => ({ relation: 'likes', object: o, certainty: 'implied', claim: (s, x) => `${s} is into ${x}` })),
  },

  // --- goals
  { re: /\bmy (?:main |big |new )?goal(?: [\w ]+?)? is to\s+(.+)/i, make: (m, c) => goal(m[1]!, c) },
  { re: /\bi(?:'m| am) (?:saving (?:up )?for|working towards?)\s+(.+)/i, make: (m, c) => goal(m[1]!, c) },
  { re: /\bi(?:'m| am) trying to\s+(.+)/i, make: (m, c) => goal(m[1]!, c) },
  {
    re: /\bi(?: really)?(?: want| hope| plan| intend| aim|'d like| would like|'d love| would love) to\s+(?!be honest)(.+)/i,
    make: (m, c) => (/\bplan\b/i.test(m[0]) ? plan(m[1]!, c) : goal(m[1]!, c)),
  },

  // --- plans and schedules
  { re: /\b(?:i(?:'m| am)|we(?:'re| are)) (?:planning|going|gonna) to\s+(.+)/i, make: (m, c) => plan(m[1]!, c) },
  {
    re: /\bi have an? ([\w ]*?(?:appointment|meeting|interview|exam|surgery|flight|trip|class|session))\b/i,
    make: (m) => [{ relation: 'plans', object: m[1]!, temporal: 'future', claim: (s, o) => `${s} has a ${o} coming up` }],
  },
  {
    re: /\bi (?:usually |always |normally |often )?(?:go to|do|have|play|attend|work|take)\s+(.+?)\s+(?:every|each|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\s+(?:to|through)\b)/i,
    make: (m, c) => {
      const verb = /\b(go to|do|have|play|attend|work|take)\s/i.exec(m[0])![1]!.toLowerCase();
      const o = objectPhrase(m[1]!, c.refDate);
      if (verb === 'play') return [{ relation: 'activity', object: o, claim: (s, x) => `${s} plays ${x}` }];
      return [{ relation: 'schedule', object: verb === 'work' || verb === 'have' ? `${o}` : o, claim: (s, x) => `${s} has ${x} regularly` }];
    },
  },
  { re: /\bi usually (\w+)(?: before| after| in the| every| around)/i, make: (m) => [{ relation: 'schedule', object: m[1]!, claim: (s, x) => `${s} usually goes for a ${x}` }] },
  { re: /\bi (?:play|practice|practise)\s+(?:the\s+)?([a-z][\w ]*)/i, make: (m, c) => [{ relation: 'activity', object: objectPhrase(m[1]!, c.refDate), claim: (s, x) => `${s} plays ${x}` }] },
  {
    re: /\bi(?:'m| am) (\w+ing)\s+(?:to\s+)?(.+)/i,
    make: (m, c) => {
      if (!datesIn(m[0], c.refDate).some((d) => d.start.date() > c.refDate) && !FUTURE.test(m[0])) return [];
      return plan(`${m[1]} ${m[1]!.match(/^(?:flying|going|travel+ing|heading|driving|moving)$/i) ? 'to ' : ''}${m[2]}`, c);
    },
  },

  // --- possessions (after the more specific "have" rules)
  {
    re: /\bi (?:drive|ride)\s+(?:an? |the |my )?(?:\d{4}\s+)?(.+)/i,
    make: (m, c) => [{ relation: 'owns', object: objectPhrase(m[1]!, c.refDate, { allowCommon: true }), certainty: 'implied', claim: (s, o) => `${s} owns a ${o}` }],
  },
  {
    re: /\bi (?:just )?(?:bought|own|got|have|'ve got|have got|purchased)\s+(?:myself\s+)?(?:(?:an?|the|two|three|some)\s+)?(?:new |old |used |little |small |big |second-hand )?(.+)/i,
    make: (m, c) => possession(m[1]!, c),
  },
];

function endClaim(verb: string): (s: string, o: string) => string {
  return (s, o) => (o ? `${s} no longer ${verb} ${o}` : `${s} no longer ${verb.replace(/ at$/, '')} there`);
}

function employer(raw: string, c: ClauseContext, certainty: Certainty = 'explicit'): Stated[] {
  // "Zalando in Berlin": the employer is the name before where it is (the tagger may know only the city).
  if (/^\s*[A-Z]/.test(raw)) raw = raw.replace(/\s+(?:in|near|outside|based in)\s+[A-Z][\s\S]*$/, '');
  const called = /\b(?:called|named)\s+([A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*)*)/.exec(raw);
  const o = called ? called[1]! : objectPhrase(raw, c.refDate, { allowCommon: false });
  if (!o || /^(?:home|a\b|an\b|weekends?|night|nights|myself|free|the weekend|it)\b/i.test(o)) return [];
  if (!/^[A-Z\d]/.test(o) && !/^the\s/i.test(raw.trim())) return [];
  return [{ relation: 'works_at', object: o, objectType: 'organization', certainty, claim: (s, x) => `${s} works at ${x}` }];
}

function homeIn(m: RegExpExecArray, c: ClauseContext): Stated[] {
  const place = objectPhrase(m[1]!, c.refDate);
  const what = /\b(flat|apartment|house|home|condo|studio|place)\b/i.exec(m[0])![1]!.toLowerCase();
  const out: Stated[] = [{ relation: 'lives_in', object: place, certainty: 'implied', objectType: 'place' }];
  if (/\b(?:own|bought|have)\b/i.test(m[0])) out.push({ relation: 'owns', object: what, certainty: 'implied', claim: (s, o) => `${s} owns a ${o}` });
  return out;
}

function possession(raw: string, c: ClauseContext): Stated[] {
  if (/\b(?:named|called)\s+[A-Z]/.test(raw) || /^(?:been|had|got|to|gone)\b/i.test(raw.trim())) return [];
  // Not things one owns: "got back from", "have faith", "have people", "have lots of memories", "got a great pic".
  if (
    /^(?:back|into|through|over|out|faith|people|friends|lots?|something|someone|anything|nothing|memories|fun|no|any|great|good|a (?:lot|bit|chance|feeling|great|good|amazing|fun|hard|tough|blast))\b/i.test(
      raw.trim(),
    )
  )
    return [];
  if (nlp(raw.trim().split(/\s+/)[0]!).has('(#PastTense|#Gerund)')) return [];
  const text = raw.replace(/\s+(?:for (?:my|work|the)\b|named\b|called\b|but\b|that\b|which\b|i\b).*$/i, '');
  const o = objectPhrase(text, c.refDate, { allowCommon: true });
  const key = o.toLowerCase();
  // The thing owned is what the verb governs, not a name further along ("got the chance to meet ... LGBTQ").
  if (o && !text.toLowerCase().split(/\s+/).slice(0, 4).join(' ').includes(key.split(' ')[0]!)) return [];
  if (!o || NOT_VALUES.has(key) || /^(?:to|no|any|kids|children|a lot|time|fun|plans?|question|idea|feeling)\b/i.test(key)) return [];
  const head = key.split(' ').pop()!;
  if (/allergy$/.test(key)) return [];
  if (CONDITIONS.has(head) || CONDITIONS.has(key) || /\b(?:diabetes|disease|syndrome|disorder|cancer|infection)\b/.test(key))
    return [{ relation: 'has_condition', object: o, claim: (s, x) => `${s} has ${x}` }];
  if (PET_WORDS.has(head) || PET_WORDS.has(head.replace(/s$/, ''))) return [{ relation: 'pet', object: head.replace(/s$/, ''), claim: (s, x) => `${s} has a ${x}` }];
  if (ROLE_PREDICATE[head.replace(/s$/, '')] || /^(?:sisters?|brothers?|kids?|twins?|family|friends?)$/.test(head)) return [];
  if (/(?:appointment|meeting|class|interview|exam|trip|flight|session|job|shift|day|week|weekend|time|cold|question|problem|issue|idea)s?$/.test(head)) return [];
  return [{ relation: 'owns', object: o, certainty: 'implied', claim: (s, x) => `${s} owns ${x}` }];
}

function goal(raw: string, c: ClauseContext): Stated[] {
  const o = phrase(raw.replace(/\s+(?:before|by|so|because|when|after|this|next|one day)\b.*$/i, ''), c.refDate);
  if (!o || NOT_VALUES.has(o.toLowerCase())) return [];
  return [{ relation: 'goal', object: o, claim: (s, x) => `${s} wants to ${x}` }];
}

function plan(raw: string, c: ClauseContext): Stated[] {
  let text = raw.trim();
  const first = text.split(/\s+/)[0]!;
  if (/ing$/i.test(first)) text = text.replace(first, infinitive(first));
  const o = phrase(text.replace(/\s+(?:for|because|so|with|since)\b.*$/i, ''), c.refDate);
  if (!o) return [];
  return [{ relation: 'plans', object: o, temporal: 'future', claim: (s, x) => `${s} plans to ${x}` }];
}

/** "hiking and bouldering on weekends" -> ["hiking", "bouldering"]; "it" -> the sentence's last object. */
function list(raw: string, c: ClauseContext): string[] {
  const cut = raw.split(/\s+(?:because|since|so|but|when|if|after|before|for|on|in|at|every|remember)\b|[.,;!?(]/i)[0] ?? '';
  return cut
    .split(/\s+(?:and|or|&)\s+|,\s*/)
    .map((p) => objectPhrase(p, c.refDate, { allowCommon: true }))
    .map((p) => (NOT_VALUES.has(p.toLowerCase()) ? (c.lastObject ?? '') : p))
    .filter((p) => p !== '' && !NOT_VALUES.has(p.toLowerCase()));
}

function one(raw: string, c: ClauseContext, make: (o: string) => Stated): Stated[] {
  let o = objectPhrase(raw, c.refDate, { allowCommon: true });
  if (NOT_VALUES.has(o.toLowerCase())) o = c.lastObject ?? '';
  return o ? [make(o)] : [];
}

/** "caring more" -> "caring"; "playing chess" stays: a word after the gerund only when it is a noun. */
function gerundObject(raw: string, rest = ''): string {
  const [g, next] = raw.split(' ');
  if (next && /^(?:a|an|the|my|some)$/i.test(next))
    return `${g} ${rest
      .split(/\s+(?:for|in|on|at|to|from|with|and|but|so|because|last|this|every)\b|[,.;!?]/i)[0]!
      .split(/\s+/)
      .slice(0, 3)
      .join(' ')}`.trim();
  return next && nlp(next).has('#Noun') && !nlp(next).has('#Adverb') ? `${g} ${next}` : g!;
}

/** Values not worth keeping: a pronoun inside, a feeling or a way of doing, a bare adjective, a vague verb. */
const VAGUE_VALUE =
  /\b(?:it|that|this|them|your|his|her|their|its|those|these)\b|^(?:the )?(?:feeling|idea|way|lesson|fact|thought|energy|vibe|chance|opportunity|sense|moment|time|part|rest|look|sound|smell|taste|news|message|support|tip|advice)\b/i;
const VAGUE_VERB =
  /^(?:brag|check|say|know|see|hear|thank|share|let|tell|ask|add|mention|talk|try|need|have|be|feel|miss|go|get|do|make|keep|stay|return|come|help|join|show|send|give|put|find|take|start|hang|catch)\b/i;

function vague(relation: string, object: string): boolean {
  const words = object.split(/\s+/);
  if (relation === 'likes' || relation === 'prefers') return VAGUE_VALUE.test(object) || (words.length === 1 && nlp(object).has('#Adjective') && !nlp(object).has('#Noun'));
  if (relation === 'goal' || relation === 'plans') return VAGUE_VALUE.test(object) || (VAGUE_VERB.test(object) && words.length < 3) || (words.length < 2 && nlp(object).has('#Verb'));
  if (relation === 'owns' || relation === 'activity') return VAGUE_VALUE.test(object);
  return false;
}

function gerund(verb: string): string {
  return (nlp(verb).verbs().toGerund().text() || verb).replace(/^(?:is|are|am)\s+/, '');
}
function infinitive(verb: string): string {
  return nlp(verb).verbs().toInfinitive().text() || verb;
}

export interface RulesExtractorOptions {
  /** Extract first-person facts from assistant turns too (both LoCoMo speakers are people). */
  factsFromAllRoles?: boolean;
}

/** What one window has learned so far that later sentences lean on. */
interface WindowState {
  /** role predicate -> the name it was given ("sister" -> "Giulia"). */
  roleNames: Map<string, string>;
  /** The last role mentioned without a name ("My sister lives in Rome" then "Her name is Giulia"). */
  lastRole?: string;
  /** Names the speaker gave themselves ("I'm Dana"), lower-cased -> display. */
  selfNames: Map<string, string>;
}

/** The rules' version, as extractions and usage rows name it. */
export const RULES_MODEL = 'rules-v2';

export class RulesExtractor implements Extractor {
  readonly provider = 'rules' as const;
  readonly model = RULES_MODEL;
  constructor(private readonly opts: RulesExtractorOptions = {}) {}

  async extract(window: ExtractionWindow): Promise<ExtractionResult> {
    const t0 = performance.now();
    const entities = new EntityBag();
    const facts: ExtractedFact[] = [];
    const relationships: ExtractedRelationship[] = [];
    const states = new Map<string, WindowState>();
    for (const turn of window.turns) {
      if (turn.role === 'system' || turn.role === 'tool') continue;
      const speaker = cleanName(turn.speaker ?? (turn.role === 'user' ? (window.userName ?? 'user') : 'assistant'));
      const firstPerson = turn.role === 'user' || this.opts.factsFromAllRoles === true;
      if (firstPerson) entities.add({ name: speaker, type: 'person', aliases: [] });
      const state = states.get(speaker) ?? { roleNames: new Map(), selfNames: new Map() };
      states.set(speaker, state);
      for (const sentence of splitSentences(normalise(turn.content))) {
        mentions(sentence, entities);
        if (!firstPerson) continue;
        sentenceFacts(sentence, speaker, turn, facts, entities, relationships, state);
      }
    }
    // The speaker's own names are aliases of the speaker, not other people; "user's sister" is her name once known.
    for (const [speaker, state] of states) {
      for (const [key, display] of state.selfNames) entities.mergeInto(speaker, key, display);
      for (const f of facts) {
        const role = /^user's (\w+)$/.exec(f.subject) ?? (f.subject.startsWith(`${speaker}'s `) ? [f.subject, f.subject.slice(speaker.length + 3)] : null);
        const name = role ? state.roleNames.get(role[1] ?? '') : undefined;
        if (name) {
          f.claim = f.claim.replace(f.subject, name);
          f.subject = name;
        }
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
    const name = e.name.replace(HONORIFIC, '');
    if (!isName(name)) return;
    const key = nameKey(name);
    const found = this.byKey.get(key);
    if (!found) {
      this.byKey.set(key, { ...e, name, aliases: [...e.aliases] });
      return;
    }
    if ((found.type === 'other' || authoritative) && e.type !== 'other') found.type = e.type;
    for (const a of e.aliases) if (!found.aliases.includes(a)) found.aliases.push(a);
    if (!found.description && e.description) found.description = e.description;
  }
  has(name: string): boolean {
    return this.byKey.has(nameKey(name));
  }
  type(name: string): EntityType | undefined {
    return this.byKey.get(nameKey(name))?.type;
  }
  /** Folds the entity `key` into `target` as an alias (the speaker's own name). */
  mergeInto(target: string, key: string, display: string): void {
    const t = this.byKey.get(nameKey(target));
    if (!t || nameKey(target) === key) return;
    this.byKey.delete(key);
    if (!t.aliases.includes(display)) t.aliases.push(display);
  }
  list(): ExtractedEntity[] {
    return [...this.byKey.values()];
  }
}

function normalise(text: string): string {
  return text.replace(/[’‘]/g, "'").replace(/[“”]/g, '"').replace(/\s+/g, ' ').trim();
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
  while (words.length > 1 && /^[a-z]/.test(words[words.length - 1]!)) words.pop();
  return words.join(' ').trim();
}

function isName(name: string): boolean {
  if (name.length < 2 || name.length > 80) return false;
  if (name === 'user') return true;
  if (!/^[\p{Lu}\p{N}]/u.test(name)) return false;
  // "I've", "I'll", "I'd": a pronoun with a contraction, never a name.
  if (/^I(?:'|\s|$)/.test(name)) return false;
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
    bag.add({ name, type: /\b(?:hospital|school|church|college|university|clinic)\b/i.test(name) ? 'organization' : 'place', aliases: [] });
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
  for (const { role, name } of roleMentions(sentence)) {
    const pred = ROLE_PREDICATE[role];
    const pet = PET_WORDS.has(role);
    bag.add({ name, type: pet ? 'other' : 'person', aliases: pred && SINGLE_VALUED.has(pred) ? [`my ${role}`] : [], description: `my ${role}` });
    typed.add(nameKey(name));
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

const ROLE_WORD = String.raw`((?:${PET_PATTERN})|[a-z]+)`;
const NAME = String.raw`([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)`;
// "my sister Alice", "my sister is Alice", "my sister, Alice,", "my dog is called Bruno"
const ROLE_BEFORE = new RegExp(
  String.raw`\b(?:[Mm]y|[Oo]ur)\s+(?:(?:older|younger|little|big|best|new|old|baby|twin|golden)\s+)?${ROLE_WORD}(?:\s+is(?:\s+(?:called|named))?|,|\s+named|\s+called|'s name is)?\s+${NAME}`,
  'g',
);
const ROLE_AFTER = new RegExp(String.raw`\b${NAME},?\s+(?:is\s+)?(?:[Mm]y|[Oo]ur)\s+(?:(?:older|younger|little|big|best|new|old|baby|twin)\s+)?${ROLE_WORD}\b`, 'g');
// "named Biscuit", "called Max"
const NAMED = /\b(?:named|called)\s+([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)/g;
/** "two kids, Leo and Ava" / "two cats, Salt and Pepper" / "a golden retriever named Biscuit" */
const LISTED = new RegExp(
  String.raw`\b(?:have|got|adopted|with)\s+(?:a|an|two|three|four|2|3|4)\s+(?:[a-z]+\s+)?(kids|children|sons|daughters|sisters|brothers|${PET_PATTERN}s?)(?:,\s*|\s+(?:named|called)\s+)${NAME}(?:,?\s+and\s+${NAME})?`,
  'g',
);
/** "We called her Miso" / "we named him Rex" after an adoption. */
const PET_NAMED = /\b(?:[Ww]e|I) (?:named|called) (?:him|her|it|them) ([A-Z][a-z'-]+)/g;

/** "my sister Alice" -> {role: 'sister', name: 'Alice'}, for every role or pet phrase of the sentence. */
function roleMentions(sentence: string): Array<{ role: string; name: string }> {
  const out: Array<{ role: string; name: string }> = [];
  const push = (role: string, rawName: string) => {
    const name = cleanName(rawName).replace(HONORIFIC, '');
    const r = role.toLowerCase();
    if ((ROLE_PREDICATE[r] || PET_WORDS.has(r)) && isName(name)) out.push({ role: r, name });
  };
  for (const [, role, name] of sentence.matchAll(ROLE_BEFORE)) push(role!, name!);
  for (const [, name, role] of sentence.matchAll(ROLE_AFTER)) push(role!, name!);
  for (const [, plural, a, b] of sentence.matchAll(LISTED)) {
    const role = plural!
      .replace(/(?:ren|s)$/, '')
      .replace(/^kid$/, 'child')
      .replace(/^child$/, 'child');
    for (const n of [a, b]) if (n) push(role === 'children' ? 'child' : role, n);
  }
  for (const [, name] of sentence.matchAll(PET_NAMED)) push('pet', name!);
  return out;
}

// A clause ends at punctuation (not the dot of "St." or "Dr.") or a conjunction; a title also
// before a preposition ("nurse at St. Mary's" -> "nurse").
const CLAUSE_BREAK = /(?<!\b(?:St|Mt|Dr|Mr|Mrs|Ms|Jr|Sr|Prof|Inc|Ltd|Co))\.|[,;!?()]|\s(?:and|but|because|since|so|when|where|which|who|as|though|although|if|or|mostly|remember|not)\s/i;
const TITLE_BREAK = /\s(?:at|for|in|on|from|with)\s/i;

/** Dates that say when (a day, month, year or weekday), not a bare part of the day ("night shifts"). */
function datesIn(text: string, refDate: Date): chrono.ParsedResult[] {
  return chrono.parse(text, refDate).filter((d) => (['year', 'month', 'day', 'weekday'] as const).some((c) => d.start.isCertain(c)));
}

function withoutDates(raw: string, refDate: Date): string {
  let text = raw;
  for (const d of datesIn(raw, refDate)) text = text.replace(d.text, ' ');
  return text.replace(
    /\b(?:now|anymore|any more|these days|today|tonight|yesterday|(?:last|this|next) (?:week|month|year|night|morning|evening|weekend|summer|spring|fall|autumn|winter)|again|too|either)\b/gi,
    ' ',
  );
}

/**
 * The object phrase of a pattern: up to the first clause break, at most 6 words, preferring
 * a proper noun inside it (unless `allowCommon` keeps a common-noun phrase whole); a title is
 * the common-noun phrase itself.
 */
function objectPhrase(raw: string, refDate: Date, o: { title?: boolean; allowCommon?: boolean } = {}): string {
  const text = withoutDates(raw, refDate);
  let clause = text.split(CLAUSE_BREAK)[0] ?? '';
  if (o.title) clause = clause.split(TITLE_BREAK)[0] ?? '';
  const proper = o.title ? [] : (nlp(clause).match('#ProperNoun+').out('array') as string[]);
  if (proper.length > 0 && !(o.allowCommon && /^\s*(?:the |a |an |my )?[a-z]/.test(clause) && !/^\s*(?:the |a |an |my )?[a-z]+ [A-Z]/.test(clause))) {
    const at = clause.indexOf(proper[0]!);
    const prefix = PLACE_PREFIX_BEFORE.exec(clause.slice(0, Math.max(at, 0)))?.[0] ?? '';
    const name = cleanName(prefix + proper[0]!).replace(HONORIFIC, '');
    // "a Canon camera": the brand and the thing it names.
    const after = clause.slice(at + proper[0]!.length).match(/^\s+([a-z]+)\b/)?.[1];
    if (o.allowCommon && after && !/^(?:for|in|on|at|and|to|with|from|i|that|which|who|is|was|but|every)$/.test(after)) return `${name} ${after}`;
    return name;
  }
  return phrase(clause, refDate);
}

/** A common-noun phrase: at most 6 words, without a leading article and trailing punctuation. */
function phrase(raw: string, refDate: Date): string {
  const words = withoutDates(raw, refDate).split(CLAUSE_BREAK)[0]!.trim().split(/\s+/).slice(0, 6);
  return words
    .join(' ')
    .replace(ARTICLE, '')
    .replace(/[^\p{L}\p{N}]+$/u, '')
    .replace(/(?:\s+(?:in|on|at|since|from|by|until|during|of|for|to|the|a|an|with))+$/i, '')
    .trim();
}

/** A clause rewritten so the rules see "I ...": its subject and the first-person text. */
interface Clause {
  subject: string;
  text: string;
  firstPerson: boolean;
}

const THIRD_VERBS: Readonly<Record<string, string>> = { is: 'am', has: 'have', does: 'do', "doesn't": "don't", was: 'was' };

/** "lives in Oslo" -> "live in Oslo": the first verb of a third-person clause in first person. */
function toFirstPerson(rest: string): string {
  const [first, ...more] = rest.split(' ');
  const w = first!.toLowerCase();
  let verb = THIRD_VERBS[w];
  if (verb === undefined)
    verb = /(?:ss|us)$/.test(w)
      ? w
      : w
          .replace(/ies$/, 'y')
          .replace(/(ch|sh|x|o)es$/, '$1')
          .replace(/s$/, '');
  return [verb, ...more].join(' ');
}

const SUBJECT_ROLE = new RegExp(String.raw`^(?:[Mm]y|[Oo]ur)\s+(?:(?:older|younger|little|big|best|new|old|baby|twin)\s+)?${ROLE_WORD}(?:,?\s+${NAME},?)?\s+(.+)$`);
const SUBJECT_NAME = new RegExp(
  String.raw`^${NAME}(?:,\s*(?:my|our)\s+[a-z ]+,)?\s+((?:is|was|has|lives|works|moved|loves|likes|hates|plays|teaches|studies|started|joined|left|quit|stayed|enjoys|prefers|owns|got|just|also|now)\b.*)$`,
);

/** Who a clause is about, and the clause in first-person form for the rules. */
function subjectOf(text: string, speaker: string, carried: Clause | undefined, state: WindowState, bag: EntityBag): Clause | undefined {
  // A leading time phrase ("Next week I'm...", "One day I want...") says when, not who.
  const t = text.trim().replace(/^(?:one day|someday|next \w+|these days|nowadays|last \w+|this \w+|today|tomorrow|tonight|starting \w+|now|lately|recently|currently),?\s+(?=[a-z])/i, '');
  if (/^(?:i|i'm|i've|i'd|i'll|me)\b/i.test(t) || /^my (?:name|favou?rite|goal|job|home|dream|plan)\b/i.test(t)) return { subject: speaker, text: t, firstPerson: true };
  // "Jake and I broke up", "Lena broke up with me", "Tofu passed away": said by the speaker about their own life.
  if (/^[A-Z][a-z]+ (?:and [Ii]\b|broke up with me|passed away|died|ran away)/.test(t)) return { subject: speaker, text: t, firstPerson: true };
  if (/^we\b|^we're\b|^we've\b/i.test(t))
    return {
      subject: speaker,
      text: t
        .replace(/^we're\b/i, "I'm")
        .replace(/^we've\b/i, "I've")
        .replace(/^we\b/i, 'I'),
      firstPerson: true,
    };
  // "[Name] and I ..." is said by the speaker (broke up, got married).
  if (/^[A-Z][a-z]+ and i\b/.test(t)) return { subject: speaker, text: t, firstPerson: true };
  const role = SUBJECT_ROLE.exec(t);
  if (role && !/^(?:name|favou?rite|goal|job|home)$/i.test(role[1]!)) {
    const r = role[1]!.toLowerCase();
    const pred = ROLE_PREDICATE[r] ?? (PET_WORDS.has(r) ? 'pet' : undefined);
    // "My asthma is gone", "My Kindle is full": the speaker's own thing, not a person.
    if (!pred) return { subject: speaker, text: t, firstPerson: true };
    const name = role[2] ? cleanName(role[2]) : state.roleNames.get(pred);
    if (!role[2]) state.lastRole = pred;
    return { subject: name ?? `${speaker === 'user' ? 'user' : speaker}'s ${pred === 'pet' ? r : pred}`, text: `I ${toFirstPerson(role[3]!)}`, firstPerson: false };
  }
  const named = SUBJECT_NAME.exec(t);
  if (named && (bag.type(named[1]!) === 'person' || [...state.roleNames.values()].includes(named[1]!))) return { subject: named[1]!, text: `I ${toFirstPerson(named[2]!)}`, firstPerson: false };
  // A clause that starts with a verb continues the previous clause's subject ("... and works for Equinor").
  if (carried && /^(?:[a-z]+(?:ed|s)|just|also|now|then|joined|left|quit|started|moved|got|sold|bought|went|took)\b/.test(t) && !/^(?:this|that|these|those|there|it|its)\b/i.test(t))
    return { subject: carried.subject, text: `I ${carried.firstPerson ? t : toFirstPerson(t)}`, firstPerson: carried.firstPerson };
  return undefined;
}

/** A sentence split where a new clause starts (a pronoun, a name or a verb after the comma or conjunction). */
function splitClauses(sentence: string): string[] {
  const parts = sentence.split(
    /\s*(?:,|;|:|\s-\s)\s*|(?<!^[A-Z][a-z]+)\s+(?=(?:and|but|so|because)\s+(?:[Ii]\b|[Ww]e\b|[Mm]y\b|[A-Z][a-z]+\s+(?:is|was|lives|works|moved|has)|[a-z]+ed\b|(?:works|lives|plays|teaches|studies|loves|likes|hates|has|owns)\b))/,
  );
  const out: string[] = [];
  for (const raw of parts) {
    const p = raw.replace(/^(?:and|but|so|because)\s+/i, '').trim();
    if (!p) continue;
    const newClause =
      /^(?:i|i'm|i've|i'd|i'll|we|we're|my|our|now i|[A-Z][a-z]+ (?:and i|is|was|lives|works|moved|has|broke)|[a-z]+ed\b|(?:works|lives|plays|teaches|studies|loves|likes|hates|has|owns)\b|just\b|also\b)/i.test(
        p,
      ) || out.length === 0;
    if (newClause) out.push(p);
    else out[out.length - 1] += `, ${p}`;
  }
  return out;
}

function sentenceFacts(sentence: string, speaker: string, turn: ExtractionTurn, facts: ExtractedFact[], bag: EntityBag, rels: ExtractedRelationship[], state: WindowState): void {
  const opener = OPENER.exec(sentence);
  const isCorrection = opener !== null && /\b(?:actually|correction|meant)\b/i.test(opener[0]);
  const body = opener ? sentence.slice(opener[0].length) : sentence;
  const refDate = new Date(turn.timestamp);
  const before = facts.length;
  // A question, a conditional, a wish or a strong hedge states nothing.
  if (
    /\?\s*$/.test(sentence) ||
    /\b(?:whether|asked if|asks if)\b/i.test(body) ||
    /^\s*(?:if|imagine|suppose|what if|should|could|would|do|does|did|can|are|is)\b/i.test(body) ||
    STRONG_HEDGE.test(body)
  )
    return;
  const soft = SOFT_HEDGE.test(body);

  const push = (subject: string, s: Stated, certainty: Certainty, temporal: TemporalTag, when: string | undefined) => {
    const object = s.object?.trim() || undefined;
    if (object !== undefined && (object.split(/\s+/).length > 7 || NOT_VALUES.has(object.toLowerCase()) || vague(s.relation, object))) return;
    const c: Certainty = soft ? 'uncertain' : certainty;
    const relation = s.relation;
    facts.push({
      claim: (s.claim ?? ((x: string, o: string) => `${x} ${relation.replace(/_/g, ' ')} ${o}`))(subject, object ?? ''),
      subject,
      relation,
      ...(object !== undefined ? { object } : {}),
      polarity: s.polarity ?? 'positive',
      singleValued: SINGLE_VALUED.has(relation),
      certainty: c,
      confidence: calibrate(c),
      temporal,
      isCorrection,
      ...(s.ends ? { ends: true } : {}),
      sourceTurnId: turn.id,
      validFrom: temporal === 'past' ? undefined : when,
      validTo: temporal === 'past' ? when : undefined,
    });
    if (s.objectType && object) {
      bag.add({ name: object, type: s.objectType, aliases: [] }, true);
      if (temporal === 'current' && !s.ends && bag.has(object) && /^[\p{Lu}\p{N}]/u.test(object) && (s.objectType === 'organization' || s.objectType === 'place')) {
        rels.push({ source: subject, target: object, type: s.objectType === 'organization' ? 'WORKS_FOR' : 'LOCATED_IN', properties: { temporal }, sourceTurnId: turn.id });
      }
    }
  };

  // Roles and pets named anywhere in the sentence: "my sister Alice", "Jonas, my best friend".
  for (const { role, name } of roleMentions(body)) {
    const pred = ROLE_PREDICATE[role] ?? 'pet';
    if (/\bmy neighbou?r's\b/i.test(body) && pred === 'pet') continue;
    state.roleNames.set(pred, name);
    push(speaker, { relation: pred, object: name, claim: (s, o) => (pred === 'pet' ? `${s}'s ${role === 'pet' ? 'pet' : role} is ${o}` : `${s}'s ${role} is ${o}`) }, 'explicit', 'current', undefined);
    if (pred !== 'pet') rels.push({ source: speaker, target: name, type: 'KNOWS', properties: { role: pred }, sourceTurnId: turn.id });
  }
  // "Her name is Giulia": the role mentioned last without a name.
  const herName = /^(?:her|his|their) name is\s+([A-Z][a-z'-]+)/i.exec(body);
  if (herName && state.lastRole) {
    state.roleNames.set(state.lastRole, herName[1]!);
    bag.add({ name: herName[1]!, type: 'person', aliases: [], description: `my ${state.lastRole}` });
    push(speaker, { relation: state.lastRole, object: herName[1]!, claim: (s, o) => `${s}'s ${state.lastRole} is ${o}` }, 'explicit', 'current', undefined);
  }

  let carried: Clause | undefined;
  let lastObject: string | undefined;
  const recent = facts.filter((f) => f.subject === speaker).map((f) => f.relation);
  for (const raw of splitClauses(body)) {
    const clause = subjectOf(raw, speaker, carried, state, bag);
    if (!clause) {
      // A clause with no subject of its own may still hold the value "it" refers to ("Penicillin makes me...").
      lastObject = (nlp(raw).nouns().out('array') as string[]).map((n) => phrase(n, refDate)).find((n) => n && !NOT_VALUES.has(n.toLowerCase())) ?? lastObject;
      continue;
    }
    carried = clause;
    const ctx: ClauseContext = { text: clause.text, refDate, lastObject, recent };
    for (const rule of RULES) {
      const m = rule.re.exec(clause.text);
      if (!m) continue;
      // A negated statement states nothing, unless the rule reads the negation itself.
      if (!rule.negated && NEGATION.test(clause.text.slice(0, m.index + m[0].length - (m[1]?.length ?? 0)))) break;
      const stated = rule.make(m, ctx);
      if (stated.length === 0) continue;
      const when = datesIn(m[0], refDate)[0]?.start.date().toISOString();
      for (const s of stated) {
        if (!clause.firstPerson && s.relation === 'name') continue;
        const temporal = s.temporal ?? (FUTURE.test(clause.text) && !s.ends ? 'future' : 'current');
        if (s.relation === 'name' && s.object) state.selfNames.set(nameKey(s.object), s.object);
        push(clause.subject, s, s.certainty ?? 'explicit', temporal === 'future' && s.relation !== 'plans' ? 'future' : temporal, when);
        if (s.object) lastObject = s.object;
        recent.push(s.relation);
      }
      break;
    }
  }

  // "No, I meant Vitaly": no rule matched, so the correction re-states the previous
  // single-valued fact of the window with the new value.
  if (isCorrection && facts.length === before) {
    const prev = [...facts].reverse().find((f) => f.subject === speaker && f.singleValued && !f.ends && f.temporal === 'current');
    const object = objectPhrase(body.replace(/^\s*(?:it'?s|it is|is)\s+/i, ''), refDate);
    if (prev && object !== '' && object.toLowerCase() !== prev.object?.toLowerCase()) {
      facts.push({ ...prev, claim: prev.claim.replace(prev.object ?? '', object), object, isCorrection: true, sourceTurnId: turn.id, certainty: 'explicit', confidence: calibrate('explicit') });
    }
  }
}

/** Same subject, relation, object, polarity and ending from one window: keep the last statement. */
function dedupeFacts(facts: ExtractedFact[]): ExtractedFact[] {
  const byKey = new Map<string, ExtractedFact>();
  for (const f of facts) byKey.set([f.subject, f.relation, f.object ?? '', f.polarity, f.ends ? 'ends' : ''].join('\u0000').toLowerCase(), f);
  return [...byKey.values()];
}

export type { ExtractionTurn };
