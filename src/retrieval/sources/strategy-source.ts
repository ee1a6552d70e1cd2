import { fuseStrategies, type ProceduralStore, type Strategy } from '../../procedural';
import type { RecallItem, RecallSource, Signals, SourceRequest } from '../contract';
import { candidateCount, round4, searchText } from './hybrid';
import { narrow, type ProvenanceFilter } from './narrowing';

export interface StrategySourceDeps {
  store: Pick<ProceduralStore, 'fullTextSearchStrategies' | 'vectorSearchStrategies'>;
  provenance: ProvenanceFilter;
}

/**
 * Strategies for recall, ranked as `findStrategies` ranks them (vector + full-text RRF
 * weighted by the smoothed success rate, see procedural/ranking.ts) but with the engine's
 * shared query embedding, so recall embeds the query once. Time range: when the strategy
 * was last used (or created); metadata filters: the conversations it SUCCEEDED_IN or FAILED_IN.
 */
export class ProceduralStrategySource implements RecallSource {
  readonly kind = 'strategy' as const;

  constructor(private readonly d: StrategySourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    const n = candidateCount(req);
    const scope = req.scope;
    const [vector, text] = await Promise.all([
      req.embedding ? this.d.store.vectorSearchStrategies(scope, req.embedding, n) : Promise.resolve([]),
      this.d.store.fullTextSearchStrategies(scope, searchText(req.query), n),
    ]);
    const signalsOf = (id: string): Signals => {
      const s: Signals = {};
      const ft = text.findIndex((h) => h.strategy.id === id);
      const vec = vector.findIndex((h) => h.strategy.id === id);
      if (ft >= 0) s.fulltext = { rank: ft + 1, score: round4(text[ft]!.score) };
      if (vec >= 0) s.vector = { rank: vec + 1, score: round4(vector[vec]!.score) };
      return s;
    };
    const fused = fuseStrategies([vector, text], n);
    const kept = await narrow('strategy', fused, (f) => ({ id: f.strategy.id, timestamp: lastUsed(f.strategy) }), req, this.d.provenance);
    return kept.slice(0, req.limit).map(({ strategy: s, score }) => ({
      id: s.id,
      kind: 'strategy',
      channel: s.channel,
      text: s.description,
      score,
      timestamp: lastUsed(s),
      signals: { ...signalsOf(s.id), success: { score: round4(s.successRate), note: `${s.successCount} succeeded, ${s.failureCount} failed` } },
      data: { contextPattern: s.contextPattern, toolSequence: s.toolSequence, successRate: s.successRate, successCount: s.successCount, failureCount: s.failureCount },
    }));
  }
}

function lastUsed(s: Strategy): string {
  return s.lastUsed ?? s.createdAt;
}
