import { NotFoundError, ValidationError } from '../errors';
import type { AccessScope } from '../access';
import type { CypherRunner } from '../infra/neo4j';
import type { Entity, EntityPage, Fact, FactPage, KnowledgeCuration, MergeEntitiesResult } from './contract';
import { aliasesText, mergeAliases, mergedType, nameKeys } from './names';
import { ENTITY, FACT, WITH_ABOUT, toEntity, toFact, type EntityRow, type FactRow } from './neo4j-semantic-store';

const TAG = (op: string) => ({ subsystem: 'semantic', op });

/** ORDER BY of each entity sort (fixed strings: the sort is validated against this table). */
const ENTITY_ORDER: Readonly<Record<EntityPage['sort'], string>> = {
  name: 'toLower(e.name), e.id',
  recent: 'e.updated_at DESC, e.id',
  mentions: 'e.mention_count DESC, toLower(e.name), e.id',
};
const FACT_ORDER: Readonly<Record<FactPage['sort'], string>> = {
  recent: 'f.created_at DESC, f.id',
  confidence: 'f.confidence DESC, f.created_at DESC, f.id',
};

// $userId, $channel, $type, $q, $includeDeleted, $offset, $limit -> {entity}; ORDER BY from ENTITY_ORDER
const LIST_ENTITIES = (order: string) => `
MATCH (e:Entity) WHERE e.user_id = $userId AND ($channel IS NULL OR e.channel = $channel) AND ($type IS NULL OR e.type = $type)
  AND ($includeDeleted OR e.valid_to IS NULL)
  AND ($q IS NULL OR toLower(e.name) CONTAINS $q OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) CONTAINS $q))
RETURN ${ENTITY} AS entity ORDER BY ${order} SKIP toInteger($offset) LIMIT toInteger($limit)`;

// $userId, $channel, $status, $entityId, $predicate, $offset, $limit -> {fact}; ORDER BY from FACT_ORDER
const LIST_FACTS = (order: string) => `
MATCH (f:Fact) WHERE f.user_id = $userId AND ($channel IS NULL OR f.channel = $channel)
  AND ($status = 'all' OR ($status = 'current') = (f.status = 'active'))
  AND ($predicate IS NULL OR f.predicate = $predicate)
  AND ($entityId IS NULL OR EXISTS { (f)-[:ABOUT]->(:Entity {id: $entityId}) })
WITH f ORDER BY ${order} SKIP toInteger($offset) LIMIT toInteger($limit)
${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $factId -> {fact}: any fact of the user
const GET_ANY_FACT = `MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId ${WITH_ABOUT} RETURN ${FACT} AS fact`;

// $userId, $factId -> {fact}: reopens a retracted fact
const RESTORE_FACT = `
MATCH (f:Fact {id: $factId}) USING INDEX SEEK f:Fact(id) WHERE f.user_id = $userId AND f.status = 'retracted'
SET f.status = 'active', f.valid_to = null, f.restored_at = datetime(), f.restore_of = f.retract_reason, f.retract_reason = null, f.updated_at = datetime()
WITH f ${WITH_ABOUT}
RETURN ${FACT} AS fact`;

// $userId, $ids -> {entity}: live entities of the user among $ids (locked for the merge: a property write)
const LOCK_ENTITIES = `
UNWIND $ids AS eid MATCH (e:Entity {id: eid}) USING INDEX SEEK e:Entity(id) WHERE e.user_id = $userId AND e.valid_to IS NULL
SET e.merge_seq = coalesce(e.merge_seq, 0) + 1
RETURN ${ENTITY} AS entity`;

// $userId, $keepId, $mergeId, $aliases, $normalizedNames, $aliasesText, $type -> {entity, merged, facts, relationships, mentions}
const MERGE_ENTITIES = `
MATCH (keep:Entity {id: $keepId}) USING INDEX SEEK keep:Entity(id) WHERE keep.user_id = $userId
MATCH (gone:Entity {id: $mergeId}) USING INDEX SEEK gone:Entity(id) WHERE gone.user_id = $userId
CALL (keep, gone) {
  OPTIONAL MATCH (f:Fact)-[r:ABOUT]->(gone)
  FOREACH (x IN CASE WHEN f IS NULL THEN [] ELSE [f] END | MERGE (x)-[:ABOUT]->(keep))
  DELETE r
  RETURN count(f) AS facts
}
CALL (keep, gone) {
  OPTIONAL MATCH (c:Conversation)-[r:MENTIONS]->(gone)
  FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END | MERGE (x)-[:MENTIONS]->(keep))
  DELETE r
  RETURN count(c) AS mentions
}
CALL (keep, gone) {
  OPTIONAL MATCH (gone)-[r]->(b:Entity) WHERE b <> keep
  CALL (keep, r, b) { WITH keep, r, b WHERE r IS NOT NULL CREATE (keep)-[moved:$(type(r))]->(b) SET moved = properties(r) }
  DELETE r
  RETURN count(r) AS outgoing
}
CALL (keep, gone) {
  OPTIONAL MATCH (a:Entity)-[r]->(gone) WHERE a <> keep
  CALL (keep, r, a) { WITH keep, r, a WHERE r IS NOT NULL CREATE (a)-[moved:$(type(r))]->(keep) SET moved = properties(r) }
  DELETE r
  RETURN count(r) AS incoming
}
CALL (keep, gone) {
  OPTIONAL MATCH (keep)-[r]-(gone)
  DELETE r
}
SET keep.aliases = $aliases, keep.normalized_names = $normalizedNames, keep.aliases_text = $aliasesText, keep.type = $type,
    keep.mention_count = coalesce(keep.mention_count, 0) + coalesce(gone.mention_count, 0), keep.updated_at = datetime(),
    gone.valid_to = datetime(), gone.merged_into = keep.id, gone.updated_at = datetime()
WITH keep, gone, facts, mentions, outgoing + incoming AS relationships
CALL (gone) { WITH gone AS e RETURN ${ENTITY} AS merged }
WITH keep AS e, merged, facts, mentions, relationships
RETURN ${ENTITY} AS entity, merged, facts, relationships, mentions`;

/** Curation of one user's knowledge in Neo4j (see `KnowledgeCuration`). */
export class Neo4jKnowledgeCuration implements KnowledgeCuration {
  constructor(private readonly db: CypherRunner) {}

  async listEntities(scope: AccessScope, q: EntityPage): Promise<Entity[]> {
    const rows = await this.db.read<{ entity: EntityRow }>(
      LIST_ENTITIES(ENTITY_ORDER[q.sort]),
      { userId: scope.userId, channel: q.channel ?? null, type: q.type ?? null, q: q.q?.toLowerCase() ?? null, includeDeleted: q.includeDeleted, offset: q.offset, limit: q.limit },
      TAG('listEntities'),
    );
    return rows.map((r) => toEntity(r.entity));
  }

  async listFacts(scope: AccessScope, q: FactPage): Promise<Fact[]> {
    const rows = await this.db.read<{ fact: FactRow }>(
      LIST_FACTS(FACT_ORDER[q.sort]),
      { userId: scope.userId, channel: q.channel ?? null, status: q.status, entityId: q.entityId ?? null, predicate: q.predicate ?? null, offset: q.offset, limit: q.limit },
      TAG('listFacts'),
    );
    return rows.map((r) => toFact(r.fact));
  }

  async restoreFact(scope: AccessScope, factId: string): Promise<Fact> {
    return this.db.writeTx(async (tx) => {
      const restored = (await tx.run(RESTORE_FACT, { userId: scope.userId, factId })).records[0];
      if (restored) return toFact(restored.get('fact') as FactRow);
      const current = (await tx.run(GET_ANY_FACT, { userId: scope.userId, factId })).records[0];
      if (!current) throw new NotFoundError('fact', factId);
      const status = (current.get('fact') as FactRow).status;
      throw new ValidationError(`invalid restore: fact ${factId} is ${status}, not retracted${status === 'superseded' ? '; correct the fact that replaced it instead' : ''}`, {
        issues: [{ path: 'factId', message: `fact is ${status}` }],
      });
    }, TAG('restoreFact'));
  }

  async mergeEntities(scope: AccessScope, keepId: string, mergeId: string): Promise<MergeEntitiesResult> {
    return this.db.writeTx(async (tx) => {
      const live = (await tx.run(LOCK_ENTITIES, { userId: scope.userId, ids: [keepId, mergeId] })).records.map((r) => toEntity(r.get('entity') as EntityRow));
      const keep = live.find((e) => e.id === keepId);
      const gone = live.find((e) => e.id === mergeId);
      if (!keep) throw new NotFoundError('entity', keepId);
      if (!gone) throw new NotFoundError('entity', mergeId);
      const aliases = mergeAliases(keep.name, keep.aliases, [gone.name, ...gone.aliases]);
      const [row] = (
        await tx.run(MERGE_ENTITIES, {
          userId: scope.userId,
          keepId,
          mergeId,
          aliases,
          normalizedNames: nameKeys(keep.name, aliases),
          aliasesText: aliasesText(aliases),
          type: mergedType(keep.type, gone.type),
        })
      ).records;
      if (!row) throw new NotFoundError('entity', mergeId);
      return {
        entity: toEntity(row.get('entity') as EntityRow),
        merged: toEntity(row.get('merged') as EntityRow),
        moved: { facts: row.get('facts') as number, relationships: row.get('relationships') as number, mentions: row.get('mentions') as number },
      };
    }, TAG('mergeEntities'));
  }
}
