import { candidateTimestamp, type TurnStage } from '../turn-pipeline';

/**
 * Time hint: when self-query found a period in boost mode ("last week", "in May 2023"), a turn
 * inside it × RECALL_TIME_HINT_BOOST (a neighbour is dated by the turn it came from). Signal
 * `time` (note: the period). Switch: RECALL_SELF_QUERY=boost.
 */
export const timeHintStage: TurnStage = {
  name: 'time',
  phase: 'score',
  enabled: (r) => r.hint !== undefined,
  apply(candidates, r) {
    const hint = r.hint!;
    for (const c of candidates) {
      const timestamp = candidateTimestamp(c, r);
      if (!timestamp || timestamp < hint.since || timestamp > hint.until) continue;
      c.score *= r.settings.timeHintBoost;
      c.signals.time = { note: `${hint.since.slice(0, 10)}..${hint.until.slice(0, 10)}` };
    }
    return candidates;
  },
};
