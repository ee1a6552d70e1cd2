import type { TurnFilters } from '../../episodic/contract';
import type { CypherRunner } from '../../infra/neo4j';
import type { RecallItemKind, SourceRequest } from '../contract';

/**
 * How recall's metadata filters (source, session, connection, context type) narrow
 * memories that are not turns: an item matches when one of the turns it came from matches
 * every given filter. Facts came from their DERIVED_FROM turns; entities from the
 * conversations that MENTION them; strategies from the conversations they SUCCEEDED_IN or
 * FAILED_IN. Goals record no provenance, so no goal matches a metadata filter.
 */
export interface ProvenanceFilter {
  /** The ids among `ids` (items of `kind` owned by `userId`) with a source turn matching `filters`. */
  matching(kind: Exclude<RecallItemKind, 'goal'>, userId: string, ids: string[], filters: TurnFilters): Promise<Set<string>>;
}

const TURN_MATCHES = `t.user_id = $userId
  AND ($source IS NULL OR t.source = $source) AND ($sessionId IS NULL OR t.session_id = $sessionId)
  AND ($connectionId IS NULL OR t.connection_id = $connectionId) AND ($contextType IS NULL OR t.context_type = $contextType)`;

// Each: $userId, $ids, $source, $sessionId, $connectionId, $contextType -> {id}: the items with a matching source turn
const MATCHING: Record<Exclude<RecallItemKind, 'goal'>, string> = {
  fact: `
UNWIND $ids AS xid MATCH (f:Fact {id: xid}) WHERE f.user_id = $userId
  AND EXISTS { MATCH (f)-[:DERIVED_FROM]->(t:Turn) WHERE ${TURN_MATCHES} }
RETURN f.id AS id`,
  entity: `
UNWIND $ids AS xid MATCH (e:Entity {id: xid}) WHERE e.user_id = $userId
  AND EXISTS { MATCH (c:Conversation)-[:MENTIONS]->(e) MATCH (c)-[:HAS_TURN]->(t:Turn) WHERE ${TURN_MATCHES} }
RETURN e.id AS id`,
  strategy: `
UNWIND $ids AS xid MATCH (s:Strategy {id: xid}) WHERE s.user_id = $userId
  AND EXISTS { MATCH (s)-[:SUCCEEDED_IN|FAILED_IN]->(c:Conversation)-[:HAS_TURN]->(t:Turn) WHERE ${TURN_MATCHES} }
RETURN s.id AS id`,
};

export class Neo4jProvenanceFilter implements ProvenanceFilter {
  constructor(private readonly db: CypherRunner) {}

  async matching(kind: Exclude<RecallItemKind, 'goal'>, userId: string, ids: string[], filters: TurnFilters): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.read<{ id: string }>(
      MATCHING[kind],
      {
        userId,
        ids,
        source: filters.source ?? null,
        sessionId: filters.sessionId ?? null,
        connectionId: filters.connectionId ?? null,
        contextType: filters.contextType ?? null,
      },
      { subsystem: 'retrieval', op: `provenance.${kind}` },
    );
    return new Set(rows.map((r) => r.id));
  }
}

/** Whether any metadata filter is set (then items must prove their provenance). */
export function hasMetadataFilter(f: TurnFilters): boolean {
  return Boolean(f.source ?? f.sessionId ?? f.connectionId ?? f.contextType);
}

/** Whether `timestamp` lies inside the request's hard time range (no range: always). */
export function inTimeRange(timestamp: string | null | undefined, req: Pick<SourceRequest, 'since' | 'until'>): boolean {
  if (!req.since && !req.until) return true;
  if (!timestamp) return false;
  const t = Date.parse(timestamp);
  if (req.since && t < Date.parse(req.since)) return false;
  if (req.until && t > Date.parse(req.until)) return false;
  return true;
}

/**
 * Keeps the items inside the request's time range and, when metadata filters are set,
 * those whose provenance matches them (one query). Order is preserved.
 */
export async function narrow<T>(
  kind: Exclude<RecallItemKind, 'goal'>,
  items: T[],
  key: (item: T) => { id: string; timestamp: string | null | undefined },
  req: SourceRequest,
  provenance: ProvenanceFilter,
): Promise<T[]> {
  const timed = items.filter((i) => inTimeRange(key(i).timestamp, req));
  if (!hasMetadataFilter(req.filters) || timed.length === 0) return timed;
  const ok = await provenance.matching(kind, req.userId, [...new Set(timed.map((i) => key(i).id))], req.filters);
  return timed.filter((i) => ok.has(key(i).id));
}
