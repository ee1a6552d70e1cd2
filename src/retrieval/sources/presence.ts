import type { CypherRunner } from '../../infra/neo4j';
import type { RecallItemKind } from '../contract';

// $userId, $channels -> {fact, entity, strategy, goal}: whether the user holds any item of
// each kind in those channels (index seeks on (user_id, channel); no scan of the items)
const PRESENT = `
RETURN EXISTS { MATCH (n:Fact) WHERE n.user_id = $userId AND n.channel IN $channels } AS fact,
       EXISTS { MATCH (n:Entity) WHERE n.user_id = $userId AND n.channel IN $channels } AS entity,
       EXISTS { MATCH (n:Strategy) WHERE n.user_id = $userId AND n.channel IN $channels } AS strategy,
       EXISTS { MATCH (n:Goal) WHERE n.user_id = $userId AND n.channel IN $channels } AS goal`;

/**
 * Which knowledge kinds a user has at all. Recall asks this (in parallel with embedding the
 * query) and skips the sources with nothing to find: an agent that has stored turns but no
 * facts yet pays one round trip, not a vector and a full-text search per empty source.
 */
export class Neo4jKnowledgePresence {
  constructor(private readonly db: CypherRunner) {}

  async kinds(userId: string, channels: string[]): Promise<Set<RecallItemKind>> {
    const [row] = await this.db.read<Record<RecallItemKind, boolean>>(PRESENT, { userId, channels }, { subsystem: 'retrieval', op: 'presence' });
    return new Set((Object.keys(row ?? {}) as RecallItemKind[]).filter((k) => row![k]));
  }
}
