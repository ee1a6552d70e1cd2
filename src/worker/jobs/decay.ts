import type { CypherRunner } from '../../infra/neo4j';
import type { JobContext, JobStats } from '../contract';

const TAG = (op: string) => ({ subsystem: 'worker', op });

/**
 * Forgetting curve (seed 003): salience x rate^days since the last access, applied
 * incrementally. Each run multiplies by rate^(days since max(last access, last decay)) and
 * stamps `decayed_at`, so running twice at one instant changes nothing, and several runs
 * compose to exactly rate^(days since access) (rate^a x rate^b = rate^(a+b)).
 *
 * - Entities and facts not accessed for a day lose salience daily.
 * - Inferred facts (certainty `inferred`, or confidence at or below 0.70 without a label)
 *   also lose confidence, weekly (rate^weeks): slower, and only for guesses.
 * - Protected (confirmed) entities and facts, and closed facts, are exempt.
 */

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

export interface DecayDeps {
  neo4j: CypherRunner;
  rate: number;
  weeklyRate: number;
  batchSize?: number;
}

/** `decay` (daily). Batches are separate transactions; each is idempotent, so an interrupted run resumes cleanly. */
export function decayJob(deps: DecayDeps) {
  return async (ctx: JobContext): Promise<JobStats> => {
    const now = ctx.clock.now().toISOString();
    const limit = deps.batchSize ?? 1000;
    const stats: JobStats = { entities: 0, facts: 0 };
    for (const [query, key] of [
      [DECAY_ENTITIES, 'entities'],
      [DECAY_FACTS, 'facts'],
    ] as const) {
      for (;;) {
        if (ctx.signal.aborted) return stats;
        const n = (await deps.neo4j.write<{ n: number }>(query, { now, rate: deps.rate, weeklyRate: deps.weeklyRate, limit, userIds: ctx.userIds ?? null }, TAG(`decay-${key}`)))[0]?.n ?? 0;
        stats[key]! += n;
        if (n < limit) break;
      }
    }
    return stats;
  };
}
