import { fuseHybrid, type FusionSettings } from '../retrieval/sources/hybrid';
import { keywords } from '../retrieval/query-text';
import type { Signals } from '../retrieval/contract';
import type { PoolActor, PoolEntry, PoolStore } from './contract';

/** One pool entry found for a query: which pool it came from, and the signals that found it. */
export interface PoolSearchHit {
  entry: PoolEntry;
  poolId: string;
  poolName: string;
  /** The fused score (weighted RRF of full-text and vector, as for turns). */
  score: number;
  signals: Signals;
}

export interface PoolSearchRequest {
  actor: Pick<PoolActor, 'tenantId'>;
  /** The pools to search, every one readable by the actor (the caller checked). */
  pools: ReadonlyArray<{ id: string; name: string }>;
  query: string;
  embedding?: number[];
  /** Whose recall (entries about another user are left out); null: every entry. */
  userId: string | null;
  limit: number;
}

/**
 * Hybrid search over pools: full-text (`pool_entry_text`, required to the pools' keys inside
 * Lucene) and vector (`pool_entry_embeddings`, filtered to the pools) fused by weighted RRF
 * exactly as facts are; an entry only the vector list found must reach `minVectorScore`.
 * Within the fused order, an entry's effective relevance (importance, confidence, recency)
 * scales its score by 0.75-1.25, so a boosted entry wins a near-tie. Shared by recall (the
 * pools source) and the facade's `pools.search`. No pools: no query at all.
 */
export async function searchPools(store: Pick<PoolStore, 'fulltextSearch' | 'vectorSearch'>, fusion: FusionSettings, req: PoolSearchRequest): Promise<PoolSearchHit[]> {
  if (req.pools.length === 0) return [];
  const ids = req.pools.map((p) => p.id);
  const names = new Map(req.pools.map((p) => [p.id, p.name]));
  const k = Math.min(Math.max(req.limit * 3, 20), 200);
  const opts = { userId: req.userId, limit: k };
  const words = keywords(req.query).join(' ') || req.query;
  const [ft, vec] = await Promise.all([store.fulltextSearch(req.actor, ids, words, opts), req.embedding ? store.vectorSearch(req.actor, ids, req.embedding, opts) : Promise.resolve([])]);
  const fused = fuseHybrid(
    ft.map((h) => ({ item: h.entry, score: h.score })),
    vec.map((h) => ({ item: h.entry, score: h.score })),
    (e) => e.id,
    fusion,
  );
  return fused
    .map((f) => ({
      entry: f.item,
      poolId: f.item.poolId,
      poolName: names.get(f.item.poolId) ?? f.item.poolId,
      score: f.score * (0.75 + 0.5 * f.item.effectiveRelevance),
      signals: { ...f.signals, relevance: { score: f.item.effectiveRelevance } },
    }))
    .sort((a, b) => b.score - a.score)
    .slice(0, req.limit);
}
