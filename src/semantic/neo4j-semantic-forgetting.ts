import type { ManagedTransaction } from 'neo4j-driver';
import type { DeletionParams } from '../access';
import { rows } from '../infra/neo4j';

/*
 * The semantic side of a delete (src/forgetting composes it with the procedural and pool
 * sides in one transaction): the facts, relationships and entities learned from a
 * conversation's turns, what else supports each, and their removal. Every statement takes
 * DeletionParams; a turn `t` is the target's when IN_TARGET(t) holds.
 */

const IN_TARGET = (t: string) => `(${t}.conversation_id = $conversationId AND ($index IS NULL OR ${t}.index = toInteger($index)))`;

// -> facts learned from the target's turns (any status), with the turns outside the target that also taught them
const FACT_CANDIDATES = `
MATCH (t:Turn) WHERE t.conversation_id = $conversationId AND t.user_id = $userId AND ($index IS NULL OR t.index = toInteger($index))
MATCH (f:Fact)-[:DERIVED_FROM]->(t) WHERE f.user_id = $userId
WITH DISTINCT f
RETURN f.id AS id, f.claim AS claim, f.predicate AS predicate, f.temporal AS temporal, f.properties_json AS props, f.status AS status,
  f.claim_key AS claimKey, coalesce(f.protected, false) AS confirmed,
  coalesce(f.source_turn_id STARTS WITH $conversationId + ':' AND ($turnId IS NULL OR f.source_turn_id = $turnId), false) AS sourcedHere,
  [(f)-[:DERIVED_FROM]->(o:Turn) WHERE NOT ${IN_TARGET('o')} | o.id] AS otherSources`;

// The conversation, seeked by id; the relationship and entity candidates hang off its mentions.
const CONVERSATION = `MATCH (c:Conversation {id: $conversationId}) USING INDEX SEEK c:Conversation(id) WHERE c.user_id = $userId`;

// -> typed relationships between entities the conversation mentions, stated in the target's turns
const RELATIONSHIP_CANDIDATES = `${CONVERSATION}
MATCH (c)-[:MENTIONS]->(e:Entity)-[r]->(x:Entity)
WHERE r.user_id = $userId AND r.source_turn_id STARTS WITH $conversationId + ':' AND ($turnId IS NULL OR r.source_turn_id = $turnId)
RETURN DISTINCT r.id AS id, e.name + ' ' + type(r) + ' ' + x.name AS label`;

// $goingFacts, $goingRels -> entities the conversation mentions, with what keeps each once those are gone
const ENTITY_CANDIDATES = `${CONVERSATION}
MATCH (c)-[:MENTIONS]->(e:Entity) WHERE e.user_id = $userId
RETURN e.id AS id, e.name AS name, coalesce(e.normalized_name = 'user', false) AS anchor, coalesce(e.protected, false) AS confirmed,
  COUNT { MATCH (f:Fact)-[:ABOUT]->(e) WHERE NOT f.id IN $goingFacts } AS facts,
  COUNT { MATCH (e)-[r]-(:Entity) WHERE NOT r.id IN $goingRels } AS relationships,
  COUNT { MATCH (o:Conversation)-[:MENTIONS]->(e) WHERE o.id <> c.id } AS otherConversations,
  $index IS NOT NULL AND EXISTS {
    MATCH (c)-[:HAS_TURN]->(t:Turn) WHERE t.index <> toInteger($index)
      AND ANY(n IN [e.name] + coalesce(e.aliases, []) WHERE toLower(t.content) CONTAINS toLower(n))
  } AS namedElsewhere`;

// $ids (facts that go) -> facts one of them had replaced (a change or a correction, not a
// duplicate merge): the evidence of the change goes, so they are current again
const REPLACED = `
UNWIND $ids AS id
MATCH (d:Fact {id: id}) USING INDEX SEEK d:Fact(id) WHERE d.user_id = $userId
MATCH (d)-[s:SUPERSEDES]->(p:Fact)
WHERE coalesce(s.reason, '') <> 'duplicate' AND p.status = 'superseded' AND p.superseded_by = d.id AND NOT p.id IN $ids
RETURN p.id AS id, p.claim AS claim, p.predicate AS predicate, p.temporal AS temporal, p.properties_json AS props`;

// $claims: [{predicate, claimKey}], $goingFacts -> the ones a current fact of the user that stays still states
const STILL_STATED = `
UNWIND $claims AS c
WITH c WHERE EXISTS { MATCH (g:Fact) WHERE g.user_id = $userId AND g.status = 'active' AND g.predicate = c.predicate AND g.claim_key = c.claimKey AND NOT g.id IN $goingFacts }
RETURN c.predicate + '|' + c.claimKey AS key`;

// $ids -> the facts made current again
const RESTORE = `
UNWIND $ids AS id
MATCH (p:Fact {id: id}) USING INDEX SEEK p:Fact(id) WHERE p.user_id = $userId
SET p.status = 'active', p.valid_to = null, p.superseded_by = null, p.updated_at = datetime()`;

// $ids -> deletes the facts (their vectors leave the index with them); an original whose _global copy goes forgets it
const DELETE_FACTS = `
UNWIND $ids AS id
MATCH (f:Fact {id: id}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
CALL (f) { MATCH (f)-[:PROMOTED_FROM]->(o:Fact) SET o.promoted_to = null }
DETACH DELETE f`;

// $rows: [{id, sourceTurnId}] -> a kept fact whose first source goes names another (or none)
const REPOINT_FACTS = `
UNWIND $rows AS row
MATCH (f:Fact {id: row.id}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId
SET f.source_turn_id = row.sourceTurnId, f.updated_at = datetime()`;

// $ids -> deletes the relationships (found again from the conversation's mentions)
const DELETE_RELATIONSHIPS = `${CONVERSATION}
MATCH (c)-[:MENTIONS]->(:Entity)-[r]->(:Entity) WHERE r.id IN $ids
DELETE r`;

// $ids -> deletes the entities
const DELETE_ENTITIES = `
UNWIND $ids AS id
MATCH (e:Entity {id: id}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId
DETACH DELETE e`;

/** A fact learned from the target's turns. */
export interface ForgettableFact {
  id: string;
  claim: string;
  predicate: string | null;
  temporal: string | null;
  props: string | null;
  status: string;
  claimKey: string | null;
  /** Confirmed by the user (seed 004: protected). */
  confirmed: boolean;
  /** Whether its source_turn_id is one of the target's turns. */
  sourcedHere: boolean;
  /** Turns outside the target it was also learned from. */
  otherSources: string[];
}

export interface ForgettableRelationship {
  id: string;
  label: string;
}

/** An entity the target's conversation mentions, with what keeps it once the facts and relationships that go are gone. */
export interface ForgettableEntity {
  id: string;
  name: string;
  /** The user's own anchor ("user"): never removed by a delete. */
  anchor: boolean;
  confirmed: boolean;
  facts: number;
  relationships: number;
  otherConversations: number;
  /** A turn of the same conversation that stays names it (one-turn deletes). */
  namedElsewhere: boolean;
}

/** A fact made current again, in the shape the profile takes it. */
export type RestorableFact = Pick<ForgettableFact, 'id' | 'claim' | 'predicate' | 'temporal' | 'props'>;

/** The decisions carried out, by id. */
export interface KnowledgeRemoval {
  restore: string[];
  deleteFacts: string[];
  repoint: Array<{ id: string; sourceTurnId: string | null }>;
  deleteRelationships: string[];
  deleteEntities: string[];
}

/** The semantic store's part of a delete, each in the caller's transaction. */
export const semanticForgetting = {
  facts: (tx: ManagedTransaction, p: DeletionParams) => rows<ForgettableFact>(tx, FACT_CANDIDATES, p),
  relationships: (tx: ManagedTransaction, p: DeletionParams) => rows<ForgettableRelationship>(tx, RELATIONSHIP_CANDIDATES, p),
  entities: (tx: ManagedTransaction, p: DeletionParams, going: { goingFacts: string[]; goingRels: string[] }) => rows<ForgettableEntity>(tx, ENTITY_CANDIDATES, { ...p, ...going }),
  replaced: (tx: ManagedTransaction, p: DeletionParams, ids: string[]) => (ids.length === 0 ? Promise.resolve([]) : rows<RestorableFact>(tx, REPLACED, { ...p, ids })),
  /** `predicate|claimKey` of the claims a current fact that stays still states. */
  async stillStated(tx: ManagedTransaction, p: DeletionParams, claims: Array<{ predicate: string | null; claimKey: string }>, goingFacts: string[]): Promise<Set<string>> {
    return new Set((await rows<{ key: string }>(tx, STILL_STATED, { ...p, claims, goingFacts })).map((r) => r.key));
  },
  async remove(tx: ManagedTransaction, p: DeletionParams, r: KnowledgeRemoval): Promise<void> {
    await tx.run(RESTORE, { ...p, ids: r.restore });
    await tx.run(DELETE_FACTS, { ...p, ids: r.deleteFacts });
    await tx.run(REPOINT_FACTS, { ...p, rows: r.repoint });
    await tx.run(DELETE_RELATIONSHIPS, { ...p, ids: r.deleteRelationships });
    await tx.run(DELETE_ENTITIES, { ...p, ids: r.deleteEntities });
  },
};
