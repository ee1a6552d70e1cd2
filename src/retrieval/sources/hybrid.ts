import type { RecallSettings, Signals, SourceRequest } from '../contract';
import { weightedRrf } from '../fusion';
import { keywords } from '../query-text';

/** Fusion settings shared with the turns, so every hybrid list is fused the same way. */
export type FusionSettings = Pick<RecallSettings, 'rrfK' | 'vectorWeight' | 'minVectorScore'>;

export interface Fused<T> {
  item: T;
  /** The RRF score (higher is better). */
  score: number;
  /** `fulltext` / `vector` with the 1-based rank and raw score in each list that found it. */
  signals: Signals;
}

/**
 * Weighted reciprocal rank fusion of a full-text and a vector list of the same kind of
 * item, exactly as for turns (full-text weight 1, vector `vectorWeight`; the vector list
 * counts fully when full-text found nothing, so a paraphrase still ranks). Best first.
 * An item only the vector list found must reach `minVectorScore`: the nearest of a user's
 * few facts is not relevant just because it is the nearest.
 */
export function fuseHybrid<T>(fulltext: ReadonlyArray<{ item: T; score: number }>, vector: ReadonlyArray<{ item: T; score: number }>, id: (item: T) => string, s: FusionSettings): Array<Fused<T>> {
  const keywordIds = new Set(fulltext.map((h) => id(h.item)));
  vector = vector.filter((h) => h.score >= s.minVectorScore || keywordIds.has(id(h.item)));
  const byId = new Map<string, T>();
  const raw: Record<'fulltext' | 'vector', Map<string, number>> = { fulltext: new Map(), vector: new Map() };
  for (const [signal, list] of [
    ['fulltext', fulltext],
    ['vector', vector],
  ] as const) {
    for (const h of list) {
      const key = id(h.item);
      if (!byId.has(key)) byId.set(key, h.item);
      if (!raw[signal].has(key)) raw[signal].set(key, h.score);
    }
  }
  const fused = weightedRrf(
    [
      { signal: 'fulltext', weight: 1, ids: fulltext.map((h) => id(h.item)) },
      { signal: 'vector', weight: fulltext.length > 0 ? s.vectorWeight : 1, ids: vector.map((h) => id(h.item)) },
    ],
    s.rrfK,
  );
  return fused.map((f) => {
    const signals: Signals = {};
    for (const [name, rank] of Object.entries(f.ranks)) signals[name] = { rank, score: round4(raw[name as 'fulltext' | 'vector'].get(f.id) ?? 0) };
    return { item: byId.get(f.id)!, score: f.score, signals };
  });
}

/**
 * How many candidates a source asks each index for: enough that narrowing by time and
 * metadata, and fusion, still leave `limit` good items, without scanning far down a list.
 */
export function candidateCount(req: Pick<SourceRequest, 'limit' | 'since' | 'until' | 'filters'>): number {
  const narrowed = req.since !== undefined || req.until !== undefined || Object.values(req.filters).some((v) => v !== undefined);
  return Math.min(200, Math.max(req.limit * (narrowed ? 5 : 3), 20));
}

export function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

/**
 * The words a full-text index is asked for: the query's topical keywords (question words
 * and pronouns dropped, as for turns), or the query itself when it has none.
 */
export function searchText(query: string): string {
  return keywords(query).join(' ') || query;
}
