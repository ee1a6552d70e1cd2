import type { AccessScope } from '../access';
import type { TierStats } from './schema';

export * from './schema';

export const TIERS = ['working', 'shortTerm', 'longTerm', 'shared'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * Counts one memory tier holds for a scope (seed 001 router stats). Each tier's owner
 * supplies one: working memory (Redis keys), the short-term tier, long-term memory (the
 * graph's episodic, semantic, procedural and goal nodes), and shared memory (the pools the
 * scope's agent may read, every pool of the tenant for an admin). The composition root lists them.
 */
export interface TierCounter {
  readonly tier: Tier;
  /** The tier's counts for the scope's user (and agent, where the tier is per agent). */
  count(scope: AccessScope): Promise<Record<string, number>>;
}

/** Runs every counter in parallel and shapes the answer; a tier without a counter reads as empty (shared: null). */
export async function tierStats(counters: readonly TierCounter[], scope: AccessScope): Promise<TierStats> {
  const got = new Map(await Promise.all(counters.map(async (c) => [c.tier, await c.count(scope)] as const)));
  const n = (tier: Tier, key: string) => got.get(tier)?.[key] ?? 0;
  return {
    userId: scope.userId,
    working: { keys: n('working', 'keys') },
    shortTerm: { entries: n('shortTerm', 'entries'), expired: n('shortTerm', 'expired'), sessions: n('shortTerm', 'sessions'), promoted: n('shortTerm', 'promoted') },
    longTerm: {
      episodic: n('longTerm', 'episodic'),
      semantic: n('longTerm', 'semantic'),
      procedural: n('longTerm', 'procedural'),
      goals: n('longTerm', 'goals'),
      total: n('longTerm', 'episodic') + n('longTerm', 'semantic') + n('longTerm', 'procedural') + n('longTerm', 'goals'),
    },
    shared: got.get('shared') ?? null,
  };
}

/** The long-term tier's counts from a user's nodes per label (whole-user stats of the graph). */
export function longTermCounts(nodes: Record<string, number>): Record<string, number> {
  const sum = (...labels: string[]) => labels.reduce((a, l) => a + (nodes[l] ?? 0), 0);
  return { episodic: sum('Turn'), semantic: sum('Fact', 'Entity'), procedural: sum('Strategy', 'ToolInvocation'), goals: sum('Goal') };
}
