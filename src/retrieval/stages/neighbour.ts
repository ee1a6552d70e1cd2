import { turnId } from '../../access';
import type { TurnHit } from '../../episodic/contract';
import { round, smoothNeighbours, type Position } from '../fusion';
import type { TurnCandidate, TurnStage } from '../turn-pipeline';

/**
 * Neighbours: each candidate passes a share of its score to the turns within
 * RECALL_NEIGHBOUR_WINDOW of it in its conversation (RECALL_NEIGHBOUR_WEIGHT, halving per
 * step); replies come after what they answer, so earlier turns gain only
 * RECALL_NEIGHBOUR_BACKWARD of it, and a question passes its whole (undemoted) score ×
 * RECALL_ANSWER_BOOST to the turn after it. A neighbour no generator found enters the
 * candidates here. Signal `neighbour` (the turn it gained most from, and the gain).
 *
 * That is the shape of a conversation between named people (LoCoMo: "What did you paint?" /
 * "A sunrise."). In a user–assistant chat (turns without a speaker's name) the user states
 * their own facts and the assistant's reply, long and general, rarely restates them: a turn
 * there passes only RECALL_CHAT_NEIGHBOUR_WEIGHT to the adjacent turns, without the answer
 * boost (on the LongMemEval_S development sample the LoCoMo weights put replies above the
 * user's turns: turn recall@10 0.829 with them, 0.965 with this; LoCoMo keeps its weights).
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
    const pass = (from: string, d: number) => {
      const hit = r.hits.get(from);
      // window[0] is the adjacent turn's share: a chat turn passes its own, to that turn only.
      if (hit && !speaksByName(hit)) return Math.abs(d) > 1 || s.neighbourWeight === 0 ? 0 : (s.chatNeighbourWeight / s.neighbourWeight) * (d < 0 ? s.neighbourBackward : 1);
      return d < 0 ? s.neighbourBackward : hit?.asks ? s.answerBoost / s.questionWeight : 1;
    };
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

const ROLE_NAMES = new Set(['user', 'assistant', 'system', 'tool']);

/** Whether a turn carries its speaker's name (a conversation between people), not just a role. */
export function speaksByName(hit: Pick<TurnHit, 'speaker'>): boolean {
  return hit.speaker !== null && hit.speaker.trim() !== '' && !ROLE_NAMES.has(hit.speaker.trim().toLowerCase());
}
