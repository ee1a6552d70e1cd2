import type { GoalStore } from '../../goals/contract';
import type { CypherRunner } from '../../infra/neo4j';
import type { Queryable } from '../../infra/postgres';
import type { ProceduralStore } from '../../procedural/contract';
import type { SemanticStore } from '../../semantic/contract';
import type { ProfileSource, RecallSettings, RecallSource } from '../contract';
import { SemanticEntitySource } from './entity-source';
import { SemanticFactSource } from './fact-source';
import { GoalRecallSource } from './goal-source';
import { StoreProvenanceFilter } from './narrowing';
import { PgProfileSource, type ProfileReader } from './profile-source';
import { StoreKnowledgePresence } from './presence';
import { ProceduralStrategySource } from './strategy-source';
import { PoolRecallSource } from './pool-source';
import { ReadablePoolsPerRecall } from './readable-pools';
import type { PoolStore } from '../../pools/contract';

export { SemanticFactSource, temporalOf } from './fact-source';
export { SemanticEntitySource } from './entity-source';
export { ProceduralStrategySource } from './strategy-source';
export { GoalRecallSource } from './goal-source';
export { PoolRecallSource } from './pool-source';
export { PgProfileSource } from './profile-source';
export { StoreProvenanceFilter, hasMetadataFilter, inTimeRange, type ProvenanceFilter } from './narrowing';
export { fuseHybrid } from './hybrid';
export { StoreKnowledgePresence } from './presence';

export interface DefaultSourcesDeps {
  semantic: SemanticStore;
  procedural: ProceduralStore;
  goals: GoalStore;
  settings: RecallSettings;
  /** Postgres (primary, so a profile just consolidated is read back) and the `user_profiles` reader. */
  pg: Queryable;
  profiles: ProfileReader;
  /** Memory pools (src/pools): entries of the pools the acting agent may read. */
  pools?: PoolStore;
  /** Runs knowledge presence: one query of the stores' presence expressions. */
  neo4j: Pick<CypherRunner, 'read'>;
}

/** The recall sources over the semantic, procedural, goal and pool stores, and the profile source. */
export function createDefaultSources(d: DefaultSourcesDeps): { sources: RecallSource[]; profile: ProfileSource; presence: StoreKnowledgePresence } {
  const provenance = new StoreProvenanceFilter({ semantic: d.semantic, procedural: d.procedural });
  const readable = d.pools ? new ReadablePoolsPerRecall(d.pools) : undefined;
  return {
    sources: [
      new SemanticFactSource({ store: d.semantic, provenance, settings: d.settings }),
      new SemanticEntitySource({ store: d.semantic, provenance, settings: d.settings }),
      new ProceduralStrategySource({ store: d.procedural, provenance }),
      new GoalRecallSource({ store: d.goals }),
      ...(d.pools ? [new PoolRecallSource({ store: d.pools, readable, settings: d.settings })] : []),
    ],
    profile: new PgProfileSource(d.pg, d.profiles),
    presence: new StoreKnowledgePresence({ neo4j: d.neo4j, pools: readable }),
  };
}
