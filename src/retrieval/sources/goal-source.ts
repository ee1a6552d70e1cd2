import type { Goal, GoalStore } from '../../goals/contract';
import type { RecallItem, RecallSource, Signals, SourceRequest } from '../contract';
import { keywords, words } from '../query-text';
import { round4 } from './hybrid';
import { hasMetadataFilter, inTimeRange } from './narrowing';

export interface GoalSourceDeps {
  store: Pick<GoalStore, 'similarActiveGoals'>;
  /** Open goals considered per recall (a user has few; default 50). */
  maxGoals?: number;
}

/**
 * Active goals for recall: the user's open goals (active or blocked) in the request's
 * channels, ranked by cosine similarity of their description to the query (keyword overlap
 * when there is no query embedding or the goal has none), nudged by priority. Every open
 * goal is a candidate, relevant or not: what the agent is working on is context. Time
 * range: the goal's last update. Goals record no source turn, so a metadata filter
 * (source, session, connection, context type) leaves none.
 */
export class GoalRecallSource implements RecallSource {
  readonly kind = 'goal' as const;

  constructor(private readonly d: GoalSourceDeps) {}

  async search(req: SourceRequest): Promise<RecallItem[]> {
    if (hasMetadataFilter(req.filters)) return [];
    const found = await this.d.store.similarActiveGoals(req.scope, { embedding: req.embedding, limit: this.d.maxGoals ?? 50 });
    const queryWords = keywords(req.query);
    const open = found.filter(({ goal }) => inTimeRange(goal.updatedAt, req));
    // Models spread cosines differently (e5 puts everything within 0.84-0.99), so similarity
    // counts relative to the user's other goals: the closest 1, the farthest 0.5.
    const sims = open.map((f) => f.similarity).filter((x): x is number => x !== null);
    const [lo, hi] = [Math.min(...sims), Math.max(...sims)];
    const relative = (x: number) => (hi > lo ? 0.5 + (0.5 * (x - lo)) / (hi - lo) : 1);
    const scored = open
      .map(({ goal, similarity }) => {
        const signals: Signals = { priority: { score: goal.priority } };
        let base: number;
        if (similarity !== null) {
          base = relative(similarity);
          signals.vector = { score: round4(similarity) };
        } else {
          base = overlap(queryWords, goal.description);
          signals.keywords = { score: round4(base) };
        }
        // Priority 1-10 moves a goal by at most ~10%: relevance first, urgency breaks near-ties.
        return { goal, signals, score: base * (0.95 + goal.priority / 100) };
      })
      .sort((a, b) => b.score - a.score || b.goal.priority - a.goal.priority || a.goal.id.localeCompare(b.goal.id));
    scored.forEach((s, i) => {
      const sig = s.signals.vector ?? s.signals.keywords;
      if (sig) sig.rank = i + 1;
    });
    return scored.slice(0, req.limit).map(({ goal, signals, score }) => toItem(goal, score, signals));
  }
}

/** Share of the query's keywords that appear among the text's words. */
function overlap(queryWords: string[], text: string): number {
  if (queryWords.length === 0) return 0;
  const have = new Set(words(text));
  return queryWords.filter((w) => have.has(w)).length / queryWords.length;
}

function toItem(g: Goal, score: number, signals: Signals): RecallItem {
  return {
    id: g.id,
    kind: 'goal',
    channel: g.channel,
    text: g.description,
    score,
    timestamp: g.updatedAt,
    signals,
    data: { status: g.status, priority: g.priority, deadline: g.deadline, parentId: g.parentId },
  };
}
