import type { CypherRunner } from '../../infra/neo4j';
import { normalizeValue } from '../../extraction/contradictions';
import type { JobContext, JobStats } from '../contract';
import type { ConsolidationLedger } from '../ledger';

const TAG = (op: string) => ({ subsystem: 'worker', op });

// $now, $days, $limit, $userIds -> {n}: archives idle conversations (and their turns); one batch
const ARCHIVE_CONVERSATIONS = `
MATCH (c:Conversation)
WHERE ($userIds IS NULL OR c.user_id IN $userIds) AND NOT coalesce(c.archived, false)
  AND coalesce(c.last_turn_at, c.started_at) < datetime($now) - duration({days: $days})
WITH c LIMIT toInteger($limit)
SET c.archived = true, c.archived_at = datetime($now)
WITH c
CALL (c) { MATCH (c)-[:HAS_TURN]->(t:Turn) SET t.archived = true }
RETURN count(c) AS n`;

// $now, $minSalience, $days, $limit, $userIds -> {n}: soft-deletes low-salience entities nobody used
// (not accessed for $days, no active fact about them, not protected); one batch
const DROP_ENTITIES = `
MATCH (e:Entity)
WHERE ($userIds IS NULL OR e.user_id IN $userIds) AND e.valid_to IS NULL AND NOT coalesce(e.protected, false)
  AND e.salience < $minSalience AND coalesce(e.last_accessed, e.created_at) < datetime($now) - duration({days: $days})
  AND NOT EXISTS { MATCH (f:Fact)-[:ABOUT]->(e) WHERE f.status = 'active' }
WITH e LIMIT toInteger($limit)
SET e.valid_to = datetime($now), e.dropped_by = 'cleanup', e.updated_at = datetime($now)
RETURN count(e) AS n`;

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

interface Pair {
  aId: string;
  bId: string;
  aProps: string | null;
  bProps: string | null;
  aProtected: boolean;
  bProtected: boolean;
  aConfidence: number;
  bConfidence: number;
  aCreated: string;
  bCreated: string;
}

export interface CleanupDeps {
  neo4j: CypherRunner;
  ledger: ConsolidationLedger;
  archiveDays: number;
  minSalience: number;
  unusedDays: number;
  duplicateSimilarity: number;
  batchSize?: number;
}

function props(json: string | null): Record<string, unknown> {
  try {
    return json ? (JSON.parse(json) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Two similar claims are duplicates only when they say the same thing: the same object
 * and polarity when extraction recorded them ("works at Google" and "works at Microsoft"
 * embed close together but contradict; merging them would hide the contradiction).
 */
export function sameStatement(aJson: string | null, bJson: string | null): boolean {
  const a = props(aJson);
  const b = props(bJson);
  const obj = (p: Record<string, unknown>) => (typeof p.object === 'string' ? normalizeValue(p.object) : '');
  const pol = (p: Record<string, unknown>) => (p.polarity === 'negative' ? 'negative' : 'positive');
  return obj(a) === obj(b) && pol(a) === pol(b);
}

/**
 * `cleanup` (daily): archives conversations idle for `archiveDays`, soft-deletes unused
 * low-salience entities, merges near-duplicate facts (keeping the protected, then the
 * more confident, then the older one), and prunes the consolidation ledger.
 */
export function cleanupJob(deps: CleanupDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const now = ctx.clock.now().toISOString();
    const limit = deps.batchSize ?? 500;
    const userIds = ctx.userIds ?? null;
    const stats: JobStats = { archived: 0, entitiesDropped: 0, factsMerged: 0, ledgerPruned: 0 };
    for (;;) {
      if (ctx.signal.aborted) return stats;
      const n = (await deps.neo4j.write<{ n: number }>(ARCHIVE_CONVERSATIONS, { now, days: deps.archiveDays, limit, userIds }, TAG('archive')))[0]?.n ?? 0;
      stats.archived! += n;
      if (n < limit) break;
    }
    for (;;) {
      if (ctx.signal.aborted) return stats;
      const n = (await deps.neo4j.write<{ n: number }>(DROP_ENTITIES, { now, minSalience: deps.minSalience, days: deps.unusedDays, limit, userIds }, TAG('drop-entities')))[0]?.n ?? 0;
      stats.entitiesDropped! += n;
      if (n < limit) break;
    }
    const pairs = await deps.neo4j.read<Pair>(DUPLICATE_PAIRS, { threshold: deps.duplicateSimilarity, limit, userIds }, TAG('duplicate-pairs'));
    for (const p of pairs) {
      if (ctx.signal.aborted) return stats;
      if (!sameStatement(p.aProps, p.bProps) || (p.aProtected && p.bProtected)) continue;
      const aFirst = p.aProtected !== p.bProtected ? p.aProtected : p.aConfidence !== p.bConfidence ? p.aConfidence > p.bConfidence : p.aCreated <= p.bCreated;
      const [keepId, dupId] = aFirst ? [p.aId, p.bId] : [p.bId, p.aId];
      stats.factsMerged! += (await deps.neo4j.write<{ n: number }>(MERGE_DUPLICATE, { keepId, dupId, now }, TAG('merge-duplicate')))[0]?.n ?? 0;
    }
    if (!ctx.userIds) stats.ledgerPruned = await deps.ledger.prune(new Date(ctx.clock.now().getTime() - 7 * 86_400_000));
    return stats;
  };
}
