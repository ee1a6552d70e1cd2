import * as chrono from 'chrono-node';
import { z } from 'zod';
import type { TextGenerator } from './contract';
import { questionTense } from './currency';

/** A time range a query talks about ("last week", "in May 2023"), and the words that said it. */
export interface TimeHint {
  since: string;
  until: string;
  /** The matched expression, removed from the keyword query (its words are not topical). */
  text: string;
}

const DAY = 86_400_000;

/**
 * Offline self-query: finds a time expression in `query` by rules (chrono-node plus bare
 * years) relative to `now`, and turns it into a range sized by how precise it was: a named
 * day is that day, a week expression ± 3.5 days, a month or a year the whole of it. Returns
 * undefined when the query names no time, and when the time it names is not when a memory was
 * said (`aboutMemories`).
 */
export function parseTimeHint(query: string, now: Date): TimeHint | undefined {
  const hint = timeRange(query, now);
  return hint && aboutMemories(hint, query, now) ? hint : undefined;
}

/** A week: the longest range that still reads as "now" ("today", "tonight", "this weekend"). */
const NOW_SPAN = 7 * DAY;

/**
 * Memories were said before `now`: a range wholly after it ("tomorrow", "next week", "this
 * weekend" asked on a Tuesday) names a plan, not when something was said; and a short range
 * around now ("tonight", "today") in a question not asked in the past tense ("recommend a
 * film to watch tonight", "what is on today?") asks about now, which the memories said earlier
 * ("what did I eat today?" keeps it).
 */
function aboutMemories(hint: TimeHint, query: string, now: Date): boolean {
  const since = Date.parse(hint.since);
  const until = Date.parse(hint.until);
  if (since > now.getTime()) return false;
  const aroundNow = until >= now.getTime() && until - since <= NOW_SPAN;
  return !aroundNow || questionTense(query) === 'past';
}

function timeRange(query: string, now: Date): TimeHint | undefined {
  const parsed = chrono.parse(query, now)[0];
  if (parsed) {
    const start = parsed.start;
    const text = parsed.text;
    if (parsed.end) return { since: parsed.start.date().toISOString(), until: endOfDay(parsed.end.date()).toISOString(), text };
    const d = start.date();
    if (/week/i.test(text)) return { since: new Date(d.getTime() - 3.5 * DAY).toISOString(), until: new Date(d.getTime() + 3.5 * DAY).toISOString(), text };
    let year = start.get('year') ?? d.getUTCFullYear();
    if (!start.isCertain('day') && start.isCertain('month')) {
      const month = (start.get('month') ?? 1) - 1;
      // A month without a year ("in May") is the last one before now, not the next.
      if (!start.isCertain('year') && Date.UTC(year, month, 1) > now.getTime()) year -= 1;
      return { since: new Date(Date.UTC(year, month, 1)).toISOString(), until: new Date(Date.UTC(year, month + 1, 1) - 1).toISOString(), text };
    }
    if (!start.isCertain('day') && !start.isCertain('month')) return yearRange(year, text);
    const day = Date.UTC(year, d.getUTCMonth(), d.getUTCDate());
    return { since: new Date(day).toISOString(), until: new Date(day + DAY - 1).toISOString(), text };
  }
  // chrono leaves bare years ("in 2022") alone.
  const y = /\b(?:in|during|of|from)\s+((?:19|20)\d{2})\b/i.exec(query);
  if (y) return yearRange(Number(y[1]), y[0]);
  return undefined;
}

function yearRange(year: number, text: string): TimeHint {
  return { since: new Date(Date.UTC(year, 0, 1)).toISOString(), until: new Date(Date.UTC(year + 1, 0, 1) - 1).toISOString(), text };
}

function endOfDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) + DAY - 1);
}

/**
 * Words that suggest a question names a period the rules may not resolve ("around the
 * holidays", "during the spring semester"); only such questions are sent to the LLM.
 * ("When ...?" asks for a time; it does not restrict one.)
 */
const TIME_CUE =
  /\b(ago|before|after|during|since|until|recent|recently|last|past|earlier|around|year|month|week|weekend|spring|summer|autumn|fall|winter|holiday|holidays|christmas|easter|thanksgiving|birthday|vacation|semester|season)\b/i;

export function mayNameTime(query: string): boolean {
  return TIME_CUE.test(query);
}

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const LlmPeriod = z.object({ since: Day.optional(), until: Day.optional() });

/**
 * Self-query with an LLM: the period a question is about, relative to `now`, as a hint
 * (first day 00:00 to last day 23:59:59.999 UTC; nothing is removed from the keywords).
 * Undefined when the LLM says the question names no period; an answer that is not such a
 * JSON object is an error.
 */
export async function llmTimeHint(generator: TextGenerator, query: string, now: Date, userId: string): Promise<TimeHint | undefined> {
  const answer = await generator.generate(
    `Today is ${now.toISOString().slice(0, 10)}. If the question is about a period of time, reply with the JSON object ` +
      '{"since": "YYYY-MM-DD", "until": "YYYY-MM-DD"} (its first and last day); otherwise reply {}. Reply with the JSON only.\n' +
      `Question: ${query}`,
    { maxTokens: 40, userId },
  );
  const json = /\{[^{}]*\}/.exec(answer)?.[0];
  let parsed: z.infer<typeof LlmPeriod> | undefined;
  try {
    parsed = json ? LlmPeriod.parse(JSON.parse(json)) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed) throw new Error(`the LLM answered no period object: "${answer.slice(0, 80)}"`);
  if (!parsed.since || !parsed.until) return undefined;
  const since = Date.parse(`${parsed.since}T00:00:00.000Z`);
  const until = Date.parse(`${parsed.until}T00:00:00.000Z`) + DAY - 1;
  if (Number.isNaN(since) || Number.isNaN(until) || until < since) throw new Error(`the LLM answered an invalid period: ${json}`);
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString(), text: '' };
}
