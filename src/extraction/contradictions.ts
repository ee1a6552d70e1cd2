import type { ContradictionPolicy, Polarity, TemporalTag } from './contract';

/**
 * Contradiction detection between a new fact and the existing facts about the SAME entity
 * with the SAME relation (the caller fetches only those; facts about another entity or
 * relation can never retire each other). Pure, so every policy is unit-tested.
 */

/** What is compared: a new extracted fact, or a stored one (its object/polarity kept in properties). */
export interface ComparableFact {
  relation: string;
  object?: string;
  polarity: Polarity;
  singleValued: boolean;
  temporal: TemporalTag;
}

export interface StoredComparableFact extends ComparableFact {
  id: string;
}

export type Resolution =
  /** No conflict: store the new fact. */
  | { action: 'store' }
  /** Store the new fact and close the conflicting ones (SUPERSEDES). */
  | { action: 'supersede'; factIds: string[] }
  /** Keep the old facts; the new one is not stored. */
  | { action: 'keep_old'; factIds: string[] }
  /** Store the new fact marked for review, linked CONTRADICTS to the old ones, which stay active. */
  | { action: 'flag'; factIds: string[] };

export function normalizeValue(v: string | undefined): string {
  return (v ?? '')
    .toLowerCase()
    .replace(/^(?:the|a|an)\s+/, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * Whether `b` contradicts `a`: both hold now (a past or future statement does not clash with
 * a current one), same relation, and either the same value with opposite polarity, or a
 * single-valued relation with a different value.
 */
export function contradicts(a: ComparableFact, b: ComparableFact): boolean {
  if (a.relation !== b.relation) return false;
  if (a.temporal !== 'current' || b.temporal !== 'current') return false;
  const sameValue = normalizeValue(a.object) === normalizeValue(b.object);
  if (sameValue) return a.polarity !== b.polarity;
  return (a.singleValued || b.singleValued) && a.polarity === 'positive' && b.polarity === 'positive';
}

/**
 * Whether the change of state `ending` ("I left Feedzai", "I quit my job") closes `stored`: a
 * current positive fact of the same relation with the same value, or any value when the
 * ending names none.
 */
export function endedBy(stored: ComparableFact, ending: ComparableFact): boolean {
  if (stored.relation !== ending.relation || stored.temporal !== 'current' || stored.polarity !== 'positive') return false;
  return ending.object === undefined || normalizeValue(ending.object) === '' || normalizeValue(stored.object) === normalizeValue(ending.object);
}

/**
 * Decides what to do with `incoming` given the existing facts of its entity and relation.
 * A user correction always supersedes (the user said the old one is wrong), and so does a
 * change of state (`ends`: the user said the old one is over); otherwise the policy decides.
 */
export function resolveContradiction(incoming: ComparableFact & { isCorrection: boolean; ends?: boolean }, existing: StoredComparableFact[], policy: ContradictionPolicy): Resolution {
  if (incoming.ends) {
    const ended = existing.filter((e) => endedBy(e, incoming)).map((e) => e.id);
    return ended.length > 0 ? { action: 'supersede', factIds: ended } : { action: 'store' };
  }
  const conflicting = existing.filter((e) => contradicts(e, incoming)).map((e) => e.id);
  if (conflicting.length === 0) return { action: 'store' };
  if (incoming.isCorrection) return { action: 'supersede', factIds: conflicting };
  switch (policy) {
    case 'prefer_new':
      return { action: 'supersede', factIds: conflicting };
    case 'prefer_old':
      return { action: 'keep_old', factIds: conflicting };
    case 'flag_review':
      return { action: 'flag', factIds: conflicting };
  }
}
