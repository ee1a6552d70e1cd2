import type { Driver } from 'neo4j-driver';
import type { Queryable } from '../infra/postgres';
import type { RedisClient } from '../infra/redis';
import { errorMessage } from '../errors';

export interface StoreCheck {
  up: boolean;
  latencyMs: number;
  error?: string;
  /** Redis only: down, but served by the in-process fallbacks (working memory, rate limits, erasure fence). */
  degraded?: boolean;
}

export interface Readiness {
  ready: boolean;
  stores: { neo4j: StoreCheck; postgres: StoreCheck; redis: StoreCheck };
}

/**
 * Readiness: every store answers a trivial query within `timeoutMs`. Checks run in
 * parallel, so /readyz answers within the timeout even when a store hangs. Redis being down
 * leaves the instance ready (reported `degraded`): every write succeeds on the in-process
 * fallbacks, and a load balancer dropping every instance would turn a Redis outage into a
 * full one.
 */
export async function checkReadiness(deps: { driver: Driver; database: string; pg: Queryable; redis: RedisClient }, timeoutMs = 2_000): Promise<Readiness> {
  const [neo4j, postgres, redis] = await Promise.all([
    probe(timeoutMs, async () => {
      // A real query (not just the pool): a dead server is noticed even with pooled connections.
      const session = deps.driver.session({ database: deps.database });
      try {
        await session.run('RETURN 1');
      } finally {
        await session.close();
      }
    }),
    probe(timeoutMs, () => deps.pg.query('SELECT 1')),
    probe(timeoutMs, () => deps.redis.ping()),
  ]);
  return { ready: neo4j.up && postgres.up, stores: { neo4j, postgres, redis: redis.up ? redis : { ...redis, degraded: true } } };
}

async function probe(timeoutMs: number, fn: () => Promise<unknown>): Promise<StoreCheck> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { up: true, latencyMs: round(performance.now() - t0) };
  } catch (err) {
    return { up: false, latencyMs: round(performance.now() - t0), error: errorMessage(err) };
  } finally {
    clearTimeout(timer);
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
