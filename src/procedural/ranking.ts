import { createHash } from 'node:crypto';
import type { ScoredStrategy, Strategy } from './contract';

/** Reciprocal-rank-fusion constant: the usual 60 keeps one list's top hit from dominating. */
const RRF_K = 60;

/**
 * The default strategy id: the same user, channel, task pattern and tool sequence always
 * give the same id, so relearning a strategy reinforces it instead of duplicating it.
 * Without a context pattern, the (normalized) description identifies the task.
 */
export function strategyId(userId: string, channel: string, contextPattern: string, toolSequence: readonly string[], description: string): string {
  const task = (contextPattern.trim() || description).toLowerCase().replace(/\s+/g, ' ').trim();
  const digest = createHash('sha256')
    .update(JSON.stringify([userId, channel, task, toolSequence]))
    .digest('hex');
  return `strategy-${digest.slice(0, 32)}`;
}

/**
 * Fuses vector and full-text hits with RRF, then weights by how well the strategy has
 * worked: score = rrf × (0.5 + successRate), so a proven strategy outranks an equally
 * relevant untested one, and a strategy that keeps failing sinks. Drops strategies below
 * `minSuccessRate`; returns at most `topK`, best first (ties by id, for stable output).
 */
export function fuseStrategies(lists: ReadonlyArray<ReadonlyArray<{ strategy: Strategy }>>, topK: number, minSuccessRate = 0): ScoredStrategy[] {
  const fused = new Map<string, { strategy: Strategy; rrf: number }>();
  for (const list of lists) {
    list.forEach(({ strategy }, rank) => {
      const entry = fused.get(strategy.id) ?? { strategy, rrf: 0 };
      entry.rrf += 1 / (RRF_K + rank + 1);
      fused.set(strategy.id, entry);
    });
  }
  return [...fused.values()]
    .filter((e) => e.strategy.successRate >= minSuccessRate)
    .map((e) => ({ strategy: e.strategy, score: e.rrf * (0.5 + e.strategy.successRate) }))
    .sort((a, b) => b.score - a.score || (a.strategy.id < b.strategy.id ? -1 : 1))
    .slice(0, topK);
}
