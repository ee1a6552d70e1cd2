import { readKeys, scopeKey, type AccessScope } from '../access';

// Re-exported for the import and backfill code that writes stored nodes' keys; new code imports '../access'.
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
 * `clause` (already escaped Lucene) among the nodes `scope` may read only (its read keys);
 * the scope adds nothing to the score. Null when there is nothing to search for.
 */
export function scopedLuceneQuery(scope: AccessScope, clause: string): string | null {
  if (clause.trim() === '' || scope.channels.length === 0) return null;
  return `+scope_key:(${readKeys(scope).join(' ')})^0 +(${clause})`;
}

/**
 * How many hits to ask a scoped index for when `limit` must survive further filters
 * (status, type, validity): all hits are the caller's, so a margin is enough.
 */
export function scopedFulltextK(limit: number): number {
  return Math.min(Math.max(limit * 10, 200), 2_000);
}
