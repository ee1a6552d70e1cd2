import type { TurnStage } from '../turn-pipeline';

/**
 * Question: a turn ending in "?" holds the asker's words, not the information, so it gives
 * way to its reply: × RECALL_QUESTION_WEIGHT (the neighbour stage passes its undemoted score,
 * × RECALL_ANSWER_BOOST, to the turn after it). No signal of its own. Switch: RECALL_NEIGHBOURS.
 */
export const questionStage: TurnStage = {
  name: 'question',
  phase: 'score',
  enabled: (r) => r.tech.neighbours,
  apply(candidates, r) {
    for (const c of candidates) if (r.hits.get(c.id)?.asks) c.score *= r.settings.questionWeight;
    return candidates;
  },
};
