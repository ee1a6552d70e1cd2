import type { AccessScope } from '../../access';
import type { GoalStore } from '../../goals/contract';
import type { ProceduralStore } from '../../procedural/contract';
import type { SemanticStore } from '../../semantic/contract';
import type { PoolStore } from '../../pools/contract';
import type { RecallItemKind } from '../contract';

/**
 * Which knowledge kinds a user has at all. Recall asks this (in parallel with embedding the
 * query) and skips the sources with nothing to find: an agent that has stored turns but no
 * facts yet pays one index seek per store, in parallel, not a vector and a full-text search
 * per empty source. Rejects when a store does (recall then searches every source).
 */
export class StoreKnowledgePresence {
  constructor(
    private readonly d: {
      semantic: Pick<SemanticStore, 'holdsKnowledge'>;
      procedural: Pick<ProceduralStore, 'hasStrategies'>;
      goals: Pick<GoalStore, 'hasGoals'>;
      /** Whether the acting agent reads any pool (asked only when the scope has an agent). */
      pools?: Pick<PoolStore, 'readablePools'>;
    },
  ) {}

  async kinds(scope: AccessScope): Promise<Set<RecallItemKind>> {
    const pools = this.d.pools;
    const [semantic, strategy, goal, pool] = await Promise.all([
      this.d.semantic.holdsKnowledge(scope),
      this.d.procedural.hasStrategies(scope),
      this.d.goals.hasGoals(scope),
      // No agent (an admin key, the library): no pools in recall, and no query for them.
      scope.agentId !== null && pools ? pools.readablePools(scope).then((p) => p.length > 0) : false,
    ]);
    const held: Record<RecallItemKind, boolean> = { ...semantic, strategy, goal, pool };
    return new Set((Object.keys(held) as RecallItemKind[]).filter((k) => held[k]));
  }
}
