import { recencyScore, round } from '../fusion';
import { candidateTimestamp, type TurnStage } from '../turn-pipeline';

const DAY_MS = 86_400_000;

/**
 * Recency: × (1 + RECALL weight `recency` × 2^(−age / RECALL_RECENCY_HALF_LIFE_DAYS)), age
 * against the query's asOf; a neighbour no generator returned is dated by the turn it came
 * from. Signal `recency` (the decay, 0..1). Switch: RECALL_RECENCY.
 */
export const recencyStage: TurnStage = {
  name: 'recency',
  phase: 'score',
  enabled: (r) => r.tech.recency,
  apply(candidates, r) {
    const nowMs = r.asOf.getTime();
    const halfLife = r.settings.recencyHalfLifeDays * DAY_MS;
    for (const c of candidates) {
      const timestamp = candidateTimestamp(c, r);
      if (!timestamp) continue;
      const decay = recencyScore(Date.parse(timestamp), nowMs, halfLife);
      c.score *= 1 + r.settings.weights.recency * decay;
      c.signals.recency = { score: round(decay, 4) };
    }
    return candidates;
  },
};
