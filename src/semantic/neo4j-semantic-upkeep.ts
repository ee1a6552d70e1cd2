import type { CypherRunner } from '../infra/neo4j';
import type { DuplicateFactPair, SemanticUpkeep, UserFilter } from './contract';

const TAG = (op: string) => ({ subsystem: 'semantic', op });

// $now, $rate, $limit, $userIds (null = all) -> {n}: one batch of entities decayed
const DECAY_ENTITIES = `
MATCH (e:Entity)
WHERE ($userIds IS NULL OR e.user_id IN $userIds) AND e.valid_to IS NULL AND NOT coalesce(e.protected, false) AND e.salience IS NOT NULL
  AND coalesce(e.last_accessed, e.created_at) <= datetime($now) - duration('P1D')
  AND (e.decayed_at IS NULL OR e.decayed_at < datetime($now))
WITH e LIMIT toInteger($limit)
WITH e, coalesce(e.last_accessed, e.created_at) AS accessed
WITH e, CASE WHEN e.decayed_at IS NOT NULL AND e.decayed_at > accessed THEN e.decayed_at ELSE accessed END AS since
WITH e, duration.inSeconds(since, datetime($now)).seconds / 86400.0 AS days
SET e.salience = CASE WHEN days > 0 THEN e.salience * ($rate ^ days) ELSE e.salience END, e.decayed_at = datetime($now)
RETURN count(e) AS n`;

// $now, $rate, $weeklyRate, $limit, $userIds (null = all) -> {n}: one batch of facts decayed (salience daily; confidence weekly when inferred)
const DECAY_FACTS = `
MATCH (f:Fact)
WHERE ($userIds IS NULL OR f.user_id IN $userIds) AND f.status = 'active' AND NOT coalesce(f.protected, false) AND coalesce(f.decay_rate, 0.05) > 0
  AND coalesce(f.last_accessed, f.created_at) <= datetime($now) - duration('P1D')
  AND (f.decayed_at IS NULL OR f.decayed_at < datetime($now))
WITH f LIMIT toInteger($limit)
WITH f, coalesce(f.last_accessed, f.created_at) AS accessed
WITH f, CASE WHEN f.decayed_at IS NOT NULL AND f.decayed_at > accessed THEN f.decayed_at ELSE accessed END AS since
WITH f, duration.inSeconds(since, datetime($now)).seconds / 86400.0 AS days,
     (f.certainty = 'inferred' OR (f.certainty IS NULL AND f.confidence <= 0.7)) AS inferred
SET f.salience = CASE WHEN days > 0 AND f.salience IS NOT NULL THEN f.salience * ($rate ^ days) ELSE f.salience END,
    f.confidence = CASE WHEN inferred AND days > 0 THEN f.confidence * ($weeklyRate ^ (days / 7.0)) ELSE f.confidence END,
    f.decayed_at = datetime($now)
RETURN count(f) AS n`;

// $threshold, $limit, $userIds -> pairs of active facts about one entity, same user, channel and
// predicate, with the same normalized claim or embeddings at least $threshold similar
const DUPLICATE_PAIRS = `
MATCH (e:Entity)<-[:ABOUT]-(a:Fact)
WHERE ($userIds IS NULL OR e.user_id IN $userIds) AND a.status = 'active' AND NOT coalesce(a.needs_review, false)
MATCH (e)<-[:ABOUT]-(b:Fact)
WHERE a.id < b.id AND b.status = 'active' AND NOT coalesce(b.needs_review, false)
  AND a.user_id = b.user_id AND a.channel = b.channel AND coalesce(a.predicate, '') = coalesce(b.predicate, '')
  AND (a.claim_key = b.claim_key OR (a.embedding IS NOT NULL AND b.embedding IS NOT NULL
       AND vector.similarity.cosine(a.embedding, b.embedding) >= $threshold))
RETURN DISTINCT a.id AS aId, b.id AS bId, a.properties_json AS aProps, b.properties_json AS bProps,
       coalesce(a.protected, false) AS aProtected, coalesce(b.protected, false) AS bProtected,
       a.confidence AS aConfidence, b.confidence AS bConfidence, toString(a.created_at) AS aCreated, toString(b.created_at) AS bCreated
LIMIT toInteger($limit)`;

// $keepId, $dupId, $now -> {n}: folds the duplicate into the kept fact (counts, provenance,
// entities) and closes it as superseded; both must still be active
const MERGE_DUPLICATE = `
MATCH (k:Fact {id: $keepId}), (d:Fact {id: $dupId})
WHERE k.status = 'active' AND d.status = 'active' AND k.user_id = d.user_id
SET d.status = 'superseded', d.superseded_by = k.id, d.merged_into = k.id, d.valid_to = datetime($now), d.updated_at = datetime($now),
    k.access_count = coalesce(k.access_count, 0) + coalesce(d.access_count, 0),
    k.mention_count = coalesce(k.mention_count, 1) + coalesce(d.mention_count, 1),
    k.confidence = CASE WHEN d.confidence > k.confidence THEN d.confidence ELSE k.confidence END, k.updated_at = datetime($now)
MERGE (k)-[s:SUPERSEDES]->(d) SET s.reason = 'duplicate'
WITH k, d
CALL (k, d) { MATCH (d)-[:DERIVED_FROM]->(t:Turn) MERGE (k)-[:DERIVED_FROM]->(t) }
CALL (k, d) { MATCH (d)-[:ABOUT]->(x:Entity) MERGE (k)-[:ABOUT]->(x) }
RETURN count(k) AS n`;

/** SemanticUpkeep over Neo4j: the worker's cross-user batches on Entity and Fact nodes. */
export class Neo4jSemanticUpkeep implements SemanticUpkeep {
  constructor(private readonly db: CypherRunner) {}

  async decayEntities(p: { now: string; rate: number; limit: number; userIds: UserFilter }): Promise<number> {
    return (await this.db.write<{ n: number }>(DECAY_ENTITIES, { ...p }, TAG('decay-entities')))[0]?.n ?? 0;
  }

  async decayFacts(p: { now: string; rate: number; weeklyRate: number; limit: number; userIds: UserFilter }): Promise<number> {
    return (await this.db.write<{ n: number }>(DECAY_FACTS, { ...p }, TAG('decay-facts')))[0]?.n ?? 0;
  }

  duplicateFactPairs(p: { threshold: number; limit: number; userIds: UserFilter }): Promise<DuplicateFactPair[]> {
    return this.db.read<DuplicateFactPair>(DUPLICATE_PAIRS, { ...p }, TAG('duplicate-pairs'));
  }

  async mergeDuplicateFacts(keepId: string, dupId: string, now: string): Promise<number> {
    return (await this.db.write<{ n: number }>(MERGE_DUPLICATE, { keepId, dupId, now }, TAG('merge-duplicate')))[0]?.n ?? 0;
  }
}
