import { readKeys, type AccessScope } from '../access';

/**
 * Lucene for the Neo4j stores' full-text indexes: the one place where query text becomes
 * Lucene syntax. Only the Neo4j stores (neo4j-*-store.ts) import it; their callers pass words.
 *
 * Owner scoping inside Lucene. Every user-owned node that a full-text index covers (Turn,
 * Fact, Entity, Strategy) carries `scope_key`, a token for its (user, channel), and the
 * index covers that property too; a query then requires one of the caller's keys, so the
 * index's top hits are always the caller's own, however many other users share the words.
 * (Filtering after the index instead lets other users' matches crowd out the caller's and
 * makes a user with few matches pay for thousands of foreign ones.)
 */

/** The labels whose full-text index requires `scope_key` (cypher/003, 006). */
export const SCOPED_LABELS = ['Turn', 'Fact', 'Entity', 'Strategy'] as const;

/** A search word and its weight against the others (1 when absent). */
export interface SearchTerm {
  term: string;
  weight?: number;
}

/** Lucene query-syntax characters: never passed through from user text. */
const LUCENE_SPECIAL = /[+\-&|!(){}[\]^"~*?:\\/]/g;
/** Operator words, dropped (the English analyzer drops them as stop words anyway). */
const OPERATORS = new Set(['and', 'or', 'not', 'to']);
const MAX_TERMS = 64;

/**
 * The Lucene-safe words of user text: query-syntax characters become spaces and operator
 * words go, so "C++ (beta)? AND title:x" cannot raise a syntax error or inject an operator
 * ("C", "beta", "title", "x"). In order, duplicates kept.
 */
export function luceneWords(text: string): string[] {
  return text
    .replace(LUCENE_SPECIAL, ' ')
    .split(/\s+/)
    .filter((t) => t.length > 0 && !OPERATORS.has(t.toLowerCase()));
}

/** Free text as a Lucene clause: its distinct safe words OR-ed (at most 64); '' when none is left. */
export function luceneQuery(text: string, maxTerms = MAX_TERMS): string {
  return [...new Set(luceneWords(text))].slice(0, maxTerms).join(' OR ');
}

/** Weighted keywords as one Lucene clause (any of them), each made safe; a weight other than 1 becomes `word^w`. */
export function luceneTerms(terms: readonly SearchTerm[]): string {
  return terms.flatMap((t) => luceneWords(t.term).map((word) => (t.weight !== undefined && t.weight !== 1 ? `${word}^${String(Math.round(t.weight * 1000) / 1000)}` : word))).join(' ');
}

/**
 * `clause` (already safe Lucene) among the nodes `scope` may read only (`readKeys`); the
 * scope adds nothing to the score. Null when there is nothing to search for.
 */
export function scopedLuceneQuery(scope: AccessScope, clause: string): string | null {
  if (clause.trim() === '' || scope.channels.length === 0) return null;
  return `+scope_key:(${readKeys(scope).join(' ')})^0 +(${clause})`;
}

/**
 * `clause` among nodes whose `field` holds one of `keys` (tokens from src/access, such as
 * the memory pools' `pool_key`); the keys add nothing to the score. Null when there is
 * nothing to search for or no key.
 */
export function keyedLuceneQuery(field: 'pool_key', keys: readonly string[], clause: string): string | null {
  if (clause.trim() === '' || keys.length === 0) return null;
  return `+${field}:(${keys.join(' ')})^0 +(${clause})`;
}

/**
 * How many hits to ask a scoped index for when `limit` must survive further filters
 * (status, type, validity): all hits are the caller's, so a margin is enough.
 */
export function scopedFulltextK(limit: number): number {
  return Math.min(Math.max(limit * 10, 200), 2_000);
}
