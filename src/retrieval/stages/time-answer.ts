import { asksWhen } from '../query-text';
import type { TurnStage } from '../turn-pipeline';

/**
 * Time answer: for a question asking when ("When did…", "How long…"), a turn that says when
 * ("yesterday", "two years ago", "in May"; `dated`, stored with the turn) ×
 * RECALL_TIME_ANSWER_BOOST. Signal `timeAnswer`. Switch: RECALL_TIME_ANSWER_BOOST.
 */
export const timeAnswerStage: TurnStage = {
  name: 'timeAnswer',
  phase: 'score',
  enabled: (r) => r.tech.timeAnswerBoost && asksWhen(r.q.query),
  apply(candidates, r) {
    for (const c of candidates) {
      if (!r.hits.get(c.id)?.dated) continue;
      c.score *= r.settings.timeAnswerBoost;
      c.signals.timeAnswer = { note: 'says when' };
    }
    return candidates;
  },
};
