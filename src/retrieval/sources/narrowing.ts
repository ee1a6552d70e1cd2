import type { AccessScope } from '../../access';
import type { TurnFilters } from '../../episodic/contract';
import type { ProceduralStore } from '../../procedural/contract';
import type { SemanticStore } from '../../semantic/contract';
import type { RecallItemKind, SourceRequest } from '../contract';

/**
 * How recall's metadata filters (source, session, connection, context type) narrow
 * memories that are not turns: an item matches when one of the turns it came from matches
 * every given filter. Facts came from their DERIVED_FROM turns; entities from the
 * conversations that MENTION them; strategies from the conversations they SUCCEEDED_IN or
 * FAILED_IN. Goals record no provenance, so no goal matches a metadata filter.
 */
export interface ProvenanceFilter {
  /** The ids among `ids` (items of `kind` the scope's user owns) with a source turn matching `filters`. */
  matching(kind: Exclude<RecallItemKind, 'goal'>, scope: AccessScope, ids: string[], filters: TurnFilters): Promise<Set<string>>;
}

/** The provenance queries of the stores that own the items. */
export class StoreProvenanceFilter implements ProvenanceFilter {
  constructor(
    private readonly d: {
      semantic: Pick<SemanticStore, 'factsWithMatchingSource' | 'entitiesWithMatchingSource'>;
      procedural: Pick<ProceduralStore, 'strategiesWithMatchingSource'>;
    },
  ) {}

  async matching(kind: Exclude<RecallItemKind, 'goal'>, scope: AccessScope, ids: string[], filters: TurnFilters): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const found =
      kind === 'fact'
        ? await this.d.semantic.factsWithMatchingSource(scope, ids, filters)
        : kind === 'entity'
          ? await this.d.semantic.entitiesWithMatchingSource(scope, ids, filters)
          : await this.d.procedural.strategiesWithMatchingSource(scope, ids, filters);
    return new Set(found);
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
  const ok = await provenance.matching(kind, req.scope, [...new Set(timed.map((i) => key(i).id))], req.filters);
  return timed.filter((i) => ok.has(key(i).id));
}
