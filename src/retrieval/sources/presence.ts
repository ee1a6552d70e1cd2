import type { AccessScope } from '../../access';
import { GOAL_PRESENCE } from '../../goals/neo4j-goal-store';
import type { CypherRunner } from '../../infra/neo4j';
import type { PoolStore } from '../../pools/contract';
import { STRATEGY_PRESENCE } from '../../procedural/neo4j-procedural-store';
import { ENTITY_PRESENCE, FACT_PRESENCE } from '../../semantic/neo4j-semantic-store';
import type { RecallItemKind } from '../contract';

// $userId, $channels -> {fact, entity, strategy, goal}: whether the user holds any of each in
// those channels. One query of the owning stores' own presence expressions (index seeks):
// asked store by store it was three round trips, each costing Neo4j and the driver more than
// its seeks do.
const KNOWLEDGE_PRESENCE = `RETURN ${FACT_PRESENCE} AS fact, ${ENTITY_PRESENCE} AS entity, ${STRATEGY_PRESENCE} AS strategy, ${GOAL_PRESENCE} AS goal`;

/**
 * Which knowledge kinds a user has at all. Recall asks this (in parallel with embedding the
 * query) and skips the sources with nothing to find: an agent that has stored turns but no
 * facts yet pays one query of index seeks, not a vector and a full-text search per empty
 * source. Rejects when Neo4j does (recall then searches every source).
 */
export class StoreKnowledgePresence {
  constructor(
    private readonly d: {
      neo4j: Pick<CypherRunner, 'read'>;
      /** Whether the acting agent reads any pool (asked only when the scope has an agent). */
      pools?: Pick<PoolStore, 'readablePools'>;
    },
  ) {}

  async kinds(scope: AccessScope): Promise<Set<RecallItemKind>> {
    const pools = this.d.pools;
    const [[row], pool] = await Promise.all([
      this.d.neo4j.read<Record<'fact' | 'entity' | 'strategy' | 'goal', boolean>>(
        KNOWLEDGE_PRESENCE,
        { userId: scope.userId, channels: scope.channels },
        { subsystem: 'retrieval', op: 'knowledgePresence' },
      ),
      // No agent (an admin key, the library): no pools in recall, and no query for them.
      scope.agentId !== null && pools ? pools.readablePools(scope).then((p) => p.length > 0) : false,
    ]);
    const held: Record<RecallItemKind, boolean> = { fact: row?.fact ?? false, entity: row?.entity ?? false, strategy: row?.strategy ?? false, goal: row?.goal ?? false, pool };
    return new Set((Object.keys(held) as RecallItemKind[]).filter((k) => held[k]));
  }
}
