/**
 * The two scores of a pool entry, pure and unit-tested (test/unit/pools.test.ts).
 *
 * Effective relevance (seed 001 `effective_relevance_score`), in [0, 1]:
 *
 *     relevance = 0.5 × importance + 0.3 × confidence + 0.2 × recency
 *     recency   = 0.5 ^ (days since the entry was last touched / halfLifeDays)
 *
 * "Touched" is the later of its last update and its last access (recall, get). Importance
 * counts most because agents set it on purpose (`boost` / `reduce`); confidence says how
 * sure the writer was; recency keeps what is in use ahead of what was merely written.
 *
 * Staleness (seed 001 context rot, archived at 0.9 by the `pools` job), in [0, 1]:
 *
 *     age       = 1 − 0.5 ^ (days since last access, else since last update / halfLifeDays)
 *     staleness = 1                          when the entry's expiry has passed
 *               = age ^ (0.5 + importance)   otherwise
 *
 * An entry nobody reads grows stale with time, the faster the less important it is: with
 * the default 30-day half-life it passes 0.9 after about 72 days at importance 0, about
 * 100 days at 0.5 and about 117 days at 1. Any access resets its age.
 */

const DAY_MS = 86_400_000;

export interface Scored {
  importance: number;
  confidence: number;
  updatedAt: string;
  lastAccessedAt: string | null;
  expiresAt: string | null;
}

function lastTouch(e: Pick<Scored, 'updatedAt' | 'lastAccessedAt'>): number {
  const u = Date.parse(e.updatedAt);
  const a = e.lastAccessedAt ? Date.parse(e.lastAccessedAt) : Number.NEGATIVE_INFINITY;
  return Math.max(u, a);
}

export function effectiveRelevance(e: Scored, now: number, halfLifeDays = 30): number {
  const days = Math.max(0, (now - lastTouch(e)) / DAY_MS);
  const recency = 0.5 ** (days / halfLifeDays);
  return round(0.5 * e.importance + 0.3 * e.confidence + 0.2 * recency);
}

export function staleness(e: Scored, now: number, halfLifeDays = 30): number {
  if (e.expiresAt && Date.parse(e.expiresAt) <= now) return 1;
  const days = Math.max(0, (now - lastTouch(e)) / DAY_MS);
  const age = 1 - 0.5 ** (days / halfLifeDays);
  return round(age ** (0.5 + e.importance));
}

/**
 * The least age (days since last touch) at which any entry can reach `threshold` (an entry
 * of importance 0): the stale-context job only reads entries older than this.
 */
export function minStaleAgeDays(threshold: number, halfLifeDays = 30): number {
  if (threshold <= 0) return 0;
  if (threshold >= 1) return Number.POSITIVE_INFINITY;
  return -halfLifeDays * Math.log2(1 - threshold ** 2);
}

/** `importance` moved by `amount` up or down, kept within [0, 1]. */
export function adjustImportance(importance: number, direction: 'boost' | 'reduce', amount: number): number {
  return round(Math.min(1, Math.max(0, importance + (direction === 'boost' ? amount : -amount))));
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
