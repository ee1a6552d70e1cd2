import { randomUUID } from 'node:crypto';
import type { Driver } from 'neo4j-driver';
import type pg from 'pg';
import { loadConfig, type Config } from '../../src/config';
import { createNeo4jDriver, Neo4jExecutor, type CypherRunner } from '../../src/infra/neo4j';
import { createPgPool } from '../../src/infra/postgres';
import { errorMessage } from '../../src/errors';

/**
 * Real connections to the stack `npm test` brought up. Tests isolate themselves with
 * random ids (see `uid`), never by wiping databases.
 */
export interface TestStack {
  config: Config;
  driver: Driver;
  neo4j: Neo4jExecutor;
  pg: pg.Pool;
  close(): Promise<void>;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...process.env, ...overrides });
}

export function openStack(overrides: Record<string, string> = {}): TestStack {
  const config = testConfig(overrides);
  const driver = createNeo4jDriver(config.neo4j);
  const pool = createPgPool(config.postgres.url, 4);
  return {
    config,
    driver,
    neo4j: new Neo4jExecutor(driver, config.neo4j.database, config.neo4j.uri),
    pg: pool,
    async close() {
      await driver.close();
      await pool.end();
    },
  };
}

/** Two rankings of the same search agree: the same ids in the same order, scores equal to 5 decimals. */
export function expectSameRanking<T extends { score: number }>(got: readonly T[], want: readonly T[], id: (hit: T) => string): void {
  expect(got.map(id)).toEqual(want.map(id));
  got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
}

/** `db`, recording the op of every read in `ops` (which statements a store ran, in order). */
export function recordingReads(db: CypherRunner, ops: string[]): CypherRunner {
  return {
    read: (cypher, params, tag) => (ops.push(tag.op), db.read(cypher, params, tag)),
    write: (cypher, params, tag) => db.write(cypher, params, tag),
    writeTx: (work, tag) => db.writeTx(work, tag),
  };
}

/**
 * A runner that plans instead of running: every read and write is sent to Neo4j as `EXPLAIN`
 * with its parameters, and the operators of its plan are pushed onto `plans` (one list per
 * statement). Reads and writes return no rows; nothing is written.
 */
export function explainingRunner(driver: Driver, plans: string[][]): CypherRunner {
  const explain = async (cypher: string, params: Record<string, unknown>) => {
    const session = driver.session();
    try {
      const { summary } = await session.run(`EXPLAIN ${cypher}`, params);
      const operators: string[] = [];
      const walk = (op: { operatorType: string; children: unknown[] }) => {
        operators.push(op.operatorType.replace(/@.*$/, ''));
        for (const child of op.children) walk(child as typeof op);
      };
      walk(summary.plan as unknown as { operatorType: string; children: unknown[] });
      plans.push(operators);
      return [];
    } finally {
      await session.close();
    }
  };
  return {
    read: (cypher, params) => explain(cypher, params),
    write: (cypher, params) => explain(cypher, params),
    writeTx: () => Promise.reject(new Error('explainingRunner plans single statements only')),
  };
}

export function uid(prefix = 't'): string {
  return `${prefix}-${randomUUID()}`;
}

/** Polls until `probe` holds, or fails the test with `what` at the deadline. */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, what: string, deadlineMs = 10_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${errorMessage(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
