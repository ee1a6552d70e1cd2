import type { GoalStore } from '../../goals/contract';
import type { CypherRunner } from '../../infra/neo4j';
import type { Queryable } from '../../infra/postgres';
import type { ProceduralStore } from '../../procedural/contract';
import type { SemanticStore } from '../../semantic/contract';
import type { ProfileSource, RecallSettings, RecallSource } from '../contract';
import { SemanticEntitySource } from './entity-source';
import { SemanticFactSource } from './fact-source';
import { GoalRecallSource } from './goal-source';
import { Neo4jProvenanceFilter } from './narrowing';
import { PgProfileSource, type ProfileReader } from './profile-source';
import { Neo4jKnowledgePresence } from './presence';
import { ProceduralStrategySource } from './strategy-source';

export { SemanticFactSource, temporalOf } from './fact-source';
export { SemanticEntitySource } from './entity-source';
export { ProceduralStrategySource } from './strategy-source';
export { GoalRecallSource } from './goal-source';
export { PgProfileSource } from './profile-source';
export { Neo4jProvenanceFilter, hasMetadataFilter, inTimeRange, type ProvenanceFilter } from './narrowing';
export { fuseHybrid } from './hybrid';
export { Neo4jKnowledgePresence } from './presence';

export interface DefaultSourcesDeps {
  neo4j: CypherRunner;
  semantic: SemanticStore;
  procedural: ProceduralStore;
  goals: GoalStore;
  settings: RecallSettings;
  /** Postgres (primary, so a profile just consolidated is read back) and the `user_profiles` reader. */
  pg: Queryable;
  profiles: ProfileReader;
}

/** The recall sources over the semantic, procedural and goal stores, and the profile source. */
export function createDefaultSources(d: DefaultSourcesDeps): { sources: RecallSource[]; profile: ProfileSource; presence: Neo4jKnowledgePresence } {
  const provenance = new Neo4jProvenanceFilter(d.neo4j);
  return {
    sources: [
      new SemanticFactSource({ store: d.semantic, provenance, settings: d.settings }),
      new SemanticEntitySource({ store: d.semantic, provenance, settings: d.settings }),
      new ProceduralStrategySource({ store: d.procedural, provenance }),
      new GoalRecallSource({ store: d.goals }),
    ],
    profile: new PgProfileSource(d.pg, d.profiles),
    presence: new Neo4jKnowledgePresence(d.neo4j),
  };
}
