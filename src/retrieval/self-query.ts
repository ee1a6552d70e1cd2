import * as chrono from 'chrono-node';

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
 * day is that day, a week expression ± 3.5 days, a month or a year the whole of it.
 * Returns undefined when the query names no time.
 */
export function parseTimeHint(query: string, now: Date): TimeHint | undefined {
  const parsed = chrono.parse(query, now)[0];
  if (parsed) {
    const start = parsed.start;
    const text = parsed.text;
    if (parsed.end) return { since: parsed.start.date().toISOString(), until: endOfDay(parsed.end.date()).toISOString(), text };
    const d = start.date();
    if (/week/i.test(text)) return { since: new Date(d.getTime() - 3.5 * DAY).toISOString(), until: new Date(d.getTime() + 3.5 * DAY).toISOString(), text };
    const year = start.get('year') ?? d.getUTCFullYear();
    if (!start.isCertain('day') && start.isCertain('month')) {
      const month = (start.get('month') ?? 1) - 1;
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
