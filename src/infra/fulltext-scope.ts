import { scopeKey } from '../access';

export { scopeKey };

/**
 * Owner scoping inside Lucene. Every user-owned node that a full-text index covers (Turn,
 * Fact, Entity, Strategy) carries `scope_key`, a token for its (user, channel), and the
 * index covers that property too; a query then requires one of the caller's keys, so the
 * index's top hits are always the caller's own, however many other users share the words.
 * (Filtering after the index instead lets other users' matches crowd out the caller's and
 * makes a user with few matches pay for thousands of foreign ones.)
 */

/** The labels whose full-text index requires `scope_key` (cypher/003, 006). */
export const SCOPED_LABELS = ['Turn', 'Fact', 'Entity', 'Strategy'] as const;

/**
 * `clause` (already escaped Lucene) among the nodes of the user's `channels` only; the
 * scope adds nothing to the score. Null when there is nothing to search for.
 */
export function scopedLuceneQuery(userId: string, channels: string[], clause: string): string | null {
  if (clause.trim() === '' || channels.length === 0) return null;
  return `+scope_key:(${channels.map((c) => scopeKey(userId, c)).join(' ')})^0 +(${clause})`;
}

/**
 * How many hits to ask a scoped index for when `limit` must survive further filters
 * (status, type, validity): all hits are the caller's, so a margin is enough.
 */
export function scopedFulltextK(limit: number): number {
  return Math.min(Math.max(limit * 10, 200), 2_000);
}
