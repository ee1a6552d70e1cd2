import { turnId } from '../../access';
import { round, smoothNeighbours, type Position } from '../fusion';
import type { TurnCandidate, TurnStage } from '../turn-pipeline';

/**
 * Neighbours: each candidate passes a share of its score to the turns within
 * RECALL_NEIGHBOUR_WINDOW of it in its conversation (RECALL_NEIGHBOUR_WEIGHT, halving per
 * step); replies come after what they answer, so earlier turns gain only
 * RECALL_NEIGHBOUR_BACKWARD of it, and a question passes its whole (undemoted) score ×
 * RECALL_ANSWER_BOOST to the turn after it. A neighbour no generator found enters the
 * candidates here. Signal `neighbour` (the turn it gained most from, and the gain).
 * Switch: RECALL_NEIGHBOURS.
 */
export const neighbourStage: TurnStage = {
  name: 'neighbour',
  phase: 'score',
  enabled: (r) => r.tech.neighbours,
  apply(candidates, r) {
    const s = r.settings;
    const base = new Map(candidates.map((c) => [c.id, c.score]));
    const byId = new Map(candidates.map((c) => [c.id, c]));
    const positions = new Map<string, Position>();
    for (const [id, h] of r.hits) positions.set(id, { conversationId: h.conversationId, index: h.index });
    const window = Array.from({ length: s.neighbourWindow }, (_, i) => s.neighbourWeight / 2 ** i);
    const pass = (from: string, d: number) => (d < 0 ? s.neighbourBackward : r.hits.get(from)?.asks ? s.answerBoost / s.questionWeight : 1);
    const smoothed = smoothNeighbours(base, positions, (p) => turnId(p.conversationId, p.index), window, pass);
    return [...smoothed].map(([id, v]): TurnCandidate => {
      const c = byId.get(id) ?? { id, score: 0, signals: {} };
      if (v.from) {
        c.signals.neighbour = { turnId: v.from, score: round(v.score - (base.get(id) ?? 0), 6) };
        c.from = v.from;
      }
      c.score = v.score;
      return c;
    });
  },
};
