/**
 * Pure helpers for entity resolution: name normalization, alias merging and choosing
 * which existing entity an input names. No I/O, so the rules are unit-tested directly.
 */

const LEADING_ARTICLE = /^(the|a|an) /;

/**
 * The key two spellings of one name share: Unicode-folded (NFKD, combining marks
 * dropped, so "José" = "Jose"), lower-cased, punctuation turned into spaces, spaces
 * collapsed, a leading English article dropped ("The Beatles" = "beatles"). Deliberately
 * no stemming or nickname tables: resolution must stay conservative.
 */
export function normalizeName(name: string): string {
  const folded = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’`]s\b/g, 's') // "Alice's" and "Alices" are the same key
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  const stripped = folded.replace(LEADING_ARTICLE, '');
  return stripped.length > 0 ? stripped : folded;
}

/** Distinct non-empty normalized keys of a name and its aliases, the name's first. */
export function nameKeys(name: string, aliases: readonly string[]): string[] {
  const keys: string[] = [];
  for (const n of [name, ...aliases]) {
    const k = normalizeName(n);
    if (k.length > 0 && !keys.includes(k)) keys.push(k);
  }
  return keys;
}

/**
 * The alias list after merging `incoming` names into an entity called `canonical`:
 * existing aliases first, in order, then new ones; nothing whose key equals the
 * canonical name's or an earlier alias's. Display spelling of the first occurrence wins.
 */
export function mergeAliases(canonical: string, existing: readonly string[], incoming: readonly string[]): string[] {
  const seen = new Set([normalizeName(canonical)]);
  const out: string[] = [];
  for (const a of [...existing, ...incoming]) {
    const trimmed = a.trim();
    const k = normalizeName(trimmed);
    if (k.length === 0 || seen.has(k)) continue;
    seen.add(k);
    out.push(trimmed);
  }
  return out;
}

/** The space-joined alias text indexed by `entity_text_scoped`. */
export function aliasesText(aliases: readonly string[]): string {
  return aliases.join(' ');
}

/** `other` is "type unknown" and matches anything; otherwise types must be equal. */
export function typesCompatible(a: string, b: string): boolean {
  return a === b || a === 'other' || b === 'other';
}

/** The type to keep when merging: a known type beats `other`; otherwise the existing one stays. */
export function mergedType(existing: string, incoming: string): string {
  return existing === 'other' ? incoming : existing;
}

export interface ResolutionCandidate {
  id: string;
  type: string;
  /** Normalized canonical name. */
  normalizedName: string;
  /** Normalized canonical name and aliases. */
  normalizedNames: readonly string[];
  salience: number;
  mentionCount: number;
  /** The candidate lives in the input's own channel (preferred over `_global`). */
  sameChannel: boolean;
}

export interface NameMatch {
  id: string;
  matchedBy: 'name' | 'alias';
}

/**
 * Picks the entity an input (normalized `keys`, name key first, and `type`) refers to, or
 * null. Only type-compatible candidates sharing a key count. Preference: the input's
 * canonical name equals the candidate's canonical name; then any key equals the
 * candidate's canonical name; then alias matches; ties go to an exact type, the same
 * channel, more mentions, higher salience, then the smaller id (stable).
 */
export function pickNameMatch(keys: readonly string[], type: string, candidates: readonly ResolutionCandidate[]): NameMatch | null {
  const inputName = keys[0];
  let best: { c: ResolutionCandidate; rank: number[] } | null = null;
  for (const c of candidates) {
    if (!typesCompatible(type, c.type)) continue;
    const shared = keys.filter((k) => c.normalizedNames.includes(k));
    if (shared.length === 0) continue;
    const nameRank = inputName === c.normalizedName ? 3 : keys.includes(c.normalizedName) ? 2 : 1;
    const rank = [nameRank, c.type === type ? 1 : 0, c.sameChannel ? 1 : 0, c.mentionCount, c.salience];
    if (!best || compareRanks(rank, best.rank) > 0 || (compareRanks(rank, best.rank) === 0 && c.id < best.c.id)) best = { c, rank };
  }
  if (!best) return null;
  return { id: best.c.id, matchedBy: best.rank[0]! >= 2 ? 'name' : 'alias' };
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** The key used to recognise the same claim said twice: case, spacing and end punctuation folded. */
export function normalizeClaim(claim: string): string {
  return claim
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.!?;,]+$/u, '')
    .trim();
}
