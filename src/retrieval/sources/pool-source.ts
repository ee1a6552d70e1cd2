import type { PoolStore } from '../../pools/contract';
import { searchPools } from '../../pools/search';
import type { RecallItem, RecallSource, SourceRequest } from '../contract';
import type { FusionSettings } from './hybrid';
import { hasMetadataFilter, inTimeRange } from './narrowing';

export interface PoolSourceDeps {
  store: Pick<PoolStore, 'readablePools' | 'fulltextSearch' | 'vectorSearch'>;
  /** Where the readable pools are asked (default: the store); recall shares one read per call with presence. */
  readable?: Pick<PoolStore, 'readablePools'>;
  settings: FusionSettings;
}

/**
 * Entries of the memory pools the acting agent may read (src/pools), for recall. The
 * readable pools are read from the pools' grants on every request (a revoke holds for the
 * next one); a scope without an agent (an admin key, the library) reads none and costs
 * nothing. Entries about another user are left out. Hybrid search as for facts
 * (`searchPools`); each item says its pool (`data.poolId`, `data.poolName`) and carries the
 * full-text / vector signals plus the entry's effective relevance. Time range: the entry's
 * last update; turn metadata filters leave none (entries record no turn metadata).
 */
export class PoolRecallSource implements RecallSource {
  readonly kind = 'pool' as const;

  constructor(private readonly d: PoolSourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    if (req.scope.agentId === null || hasMetadataFilter(req.filters)) return [];
    const pools = await (this.d.readable ?? this.d.store).readablePools(req.scope);
    if (pools.length === 0) return [];
    const hits = await searchPools(this.d.store, this.d.settings, { actor: req.scope, pools, query: req.query, embedding: req.embedding, userId: req.scope.userId, limit: req.limit * 2 });
    return hits
      .filter((h) => inTimeRange(h.entry.updatedAt, req))
      .slice(0, req.limit)
      .map((h) => ({
        id: h.entry.id,
        kind: 'pool',
        channel: '_pools',
        text: h.entry.content,
        score: h.score,
        timestamp: h.entry.updatedAt,
        signals: { ...h.signals, pool: { note: h.poolId } },
        data: {
          poolId: h.poolId,
          poolName: h.poolName,
          entryKind: h.entry.kind,
          source: h.entry.source,
          importance: h.entry.importance,
          confidence: h.entry.confidence,
          version: h.entry.version,
          userId: h.entry.userId,
          effectiveRelevance: h.entry.effectiveRelevance,
          provenance: h.entry.provenance,
        },
      }));
  }
}
