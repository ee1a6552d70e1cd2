import neo4j, { isRetryableError, ManagedTransaction, type Driver, type RecordShape, type Session, type Transaction } from 'neo4j-driver';
import { MnemographError, StoreUnavailableError, ValidationError, SchemaError, errorMessage } from '../errors';

/** Who runs a query: recorded as transaction metadata, visible in `SHOW TRANSACTIONS` and query logs. */
export interface QueryTag {
  subsystem: string;
  op: string;
}

/**
 * The one door to Neo4j. Always managed (retried) read/write transactions, always
 * parameters, always tagged with the subsystem and operation. Errors leave mapped. While
 * Neo4j is unreachable, calls fail within a couple of seconds with StoreUnavailableError
 * (503 at the API) instead of retrying for the whole retry window.
 */
export interface CypherRunner {
  /**
   * Runs a read query (one statement that writes nothing) in an auto-commit read transaction
   * (routed to readers on a cluster); retried on transient errors like the writes.
   */
  read<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]>;
  /**
   * Runs a write query in a managed write transaction; retried on transient errors. A write
   * whose commit was sent but never acknowledged (the server died) fails with
   * StoreUnavailableError and may have committed: writes must be idempotent on retry.
   */
  write<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]>;
  /** Runs several statements in one managed write transaction (all or nothing). */
  writeTx<R>(work: (tx: ManagedTransaction) => Promise<R>, tag: QueryTag): Promise<R>;
}

/** A statement's records in the caller's transaction, as plain objects. */
export async function rows<T>(tx: ManagedTransaction, cypher: string, params: Record<string, unknown>): Promise<T[]> {
  return (await tx.run(cypher, params)).records.map((r) => r.toObject() as T);
}

/** What the driver is built from (part of `Config['neo4j']`; declared here so drivers do not depend on config). */
export interface Neo4jConnection {
  uri: string;
  user: string;
  password: string;
}

/** Transaction metadata every query carries (`SHOW TRANSACTIONS`, query logs). */
type TxConfig = { metadata: Record<string, string> };

/** The retry of transient errors (deadlocks, a leader switch, a stale pooled connection): the driver's defaults. */
const RETRY = { maxTimeMs: 10_000, initialDelayMs: 1_000, multiplier: 2, jitter: 0.2 };

/** How long a reachability probe may take. */
const PROBE_TIMEOUT_MS = 1_500;

/** Errors that mean "no server to talk to" rather than "try again": a probe decides which. */
function isConnectivityError(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === 'ServiceUnavailable' || code === 'SessionExpired' || code === 'Neo.TransientError.General.DatabaseUnavailable';
}

export function createNeo4jDriver(config: Neo4jConnection): Driver {
  return neo4j.driver(config.uri, neo4j.auth.basic(config.user, config.password), {
    disableLosslessIntegers: true,
    maxConnectionPoolSize: 50,
    connectionAcquisitionTimeout: 10_000,
    connectionTimeout: 5_000,
    // Neo4jExecutor retries itself; the driver's loop (session.executeRead/executeWrite, unused)
    // retried a dead server for 13-18 s per call before the API could answer 503.
    maxTransactionRetryTime: RETRY.maxTimeMs,
    userAgent: 'mnemograph/0.1',
  });
}

/**
 * The executor: one session per call, each attempt a transaction that commits or rolls back
 * whole (as `session.executeWrite` runs it), attempts retried here rather than in the driver so
 * that an outage is told apart from contention. A transient error (deadlock, leader switch,
 * stale pooled connection) is retried for up to 10 s with the driver's back-off. A connectivity
 * error (ServiceUnavailable, SessionExpired, DatabaseUnavailable while the server restarts) asks
 * a probe (`RETURN 1`, 1.5 s at most, shared by every call): when Neo4j does not answer, the
 * executor is marked down and the call fails at once with StoreUnavailableError. While down,
 * each call first awaits a probe (the one in flight, else a new one): it fails
 * within the probe's time, and the first probe that succeeds lets calls through again.
 */
export class Neo4jExecutor implements CypherRunner {
  /** The connectivity error that marked Neo4j down; undefined while it answers. */
  private down: unknown;
  private probing: Promise<boolean> | undefined;

  constructor(
    private readonly driver: Driver,
    private readonly database: string,
    private readonly uri: string,
  ) {}

  async read<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]> {
    // One statement that writes nothing: an auto-commit transaction, one RUN+PULL round trip,
    // where BEGIN, RUN+PULL and COMMIT took three (recall's six reads spent a third of Neo4j's CPU
    // and most of the driver's socket writes on BEGIN and COMMIT). Retried and probed as writes are.
    return this.session('READ', tag, async (session, txConfig) => (await withoutDriverStack(() => session.run<T>(cypher, params, txConfig))).records.map((r) => r.toObject()));
  }

  async write<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]> {
    return this.writeTx(async (tx) => (await tx.run<T>(cypher, params)).records.map((r) => r.toObject()), tag);
  }

  async writeTx<R>(work: (tx: ManagedTransaction) => Promise<R>, tag: QueryTag): Promise<R> {
    return this.session('WRITE', tag, (session, txConfig) => this.attempt(session, txConfig, work));
  }

  /** Whether the last probe found Neo4j unreachable (calls fail fast until one succeeds). */
  get unavailable(): boolean {
    return this.down !== undefined;
  }

  /** One call's session: `run` is one attempt (an auto-commit read, or `attempt`'s transaction), retried and probed here. */
  private async session<R>(mode: 'READ' | 'WRITE', tag: QueryTag, run: (session: Session, txConfig: TxConfig) => Promise<R>): Promise<R> {
    const ctx = { uri: this.uri, database: this.database, ...tag };
    if (this.down !== undefined && !(await this.reachable())) throw mapNeo4jError(this.down, ctx);
    const session = this.driver.session({ database: this.database, defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE });
    const txConfig = { metadata: { app: 'mnemograph', subsystem: tag.subsystem, op: tag.op } };
    try {
      const started = Date.now();
      for (let delayMs = RETRY.initialDelayMs; ; delayMs *= RETRY.multiplier) {
        try {
          return await run(session, txConfig);
        } catch (err) {
          if (!isRetryableError(err) || Date.now() - started > RETRY.maxTimeMs) throw err;
          // A dead server is not retried: the caller hears 503 now (a write's retry is idempotent).
          if (isConnectivityError(err) && !(await this.reachable(err))) throw err;
        }
        await new Promise((r) => setTimeout(r, delayMs * (1 - RETRY.jitter + Math.random() * 2 * RETRY.jitter)));
        if (this.down !== undefined) throw mapNeo4jError(this.down, ctx);
      }
    } catch (err) {
      throw mapNeo4jError(err, ctx);
    } finally {
      await session.close().catch(() => undefined);
    }
  }

  /**
   * One transaction: the work, then commit; rolled back when the work fails (as `executeWrite`
   * does). BEGIN is not awaited: it goes out with the first statement, one round trip fewer per
   * write (storeTurn p50 10.2-10.5 -> 9.8-10.1 ms); a BEGIN that fails fails that statement.
   */
  private async attempt<R>(session: Session, txConfig: TxConfig, work: (tx: ManagedTransaction) => Promise<R>): Promise<R> {
    const tx = withoutDriverStack(() => session.beginTransaction(txConfig));
    try {
      const result = await work(withoutStacks(tx));
      await withoutDriverStack(() => tx.commit());
      return result;
    } catch (err) {
      if (tx.isOpen()) await tx.rollback().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Whether Neo4j answers a query now: the probe in flight, else a new one (one at a time, so
   * an outage costs one `RETURN 1` attempt at a time, not one per call). A failed probe marks
   * the executor down with `cause` (or the probe's own error); a successful one clears it.
   */
  private reachable(cause?: unknown): Promise<boolean> {
    if (this.probing) return this.probing;
    const probe = async (): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      let session: ReturnType<Driver['session']> | undefined;
      try {
        session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.READ });
        await Promise.race([
          session.run('RETURN 1'),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`), { code: 'ServiceUnavailable' })), PROBE_TIMEOUT_MS);
          }),
        ]);
        this.down = undefined;
        return true;
      } catch (err) {
        this.down = cause ?? err;
        return false;
      } finally {
        clearTimeout(timer);
        // Not awaited: a probe that timed out may hold its session until the connection gives up.
        session?.close().catch(() => undefined);
      }
    };
    this.probing = probe().finally(() => (this.probing = undefined));
    return this.probing;
  }
}

/**
 * Starts a driver call without the stack trace the driver records for every Result (to put on
 * an error that may come later): formatting it (through source maps when run by tsx) cost more
 * CPU than decoding the query's rows. A failing query still says what failed: the mapped error
 * carries the query's subsystem and operation, and its own stack.
 */
function withoutDriverStack<T>(start: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** `tx` as the unit of work gets it, each statement started without the driver's stack (the write path's share of that CPU). */
function withoutStacks(tx: Transaction): ManagedTransaction {
  const managed = ManagedTransaction.fromTransaction(tx);
  const run = managed.run.bind(managed);
  return Object.assign(managed, { run: ((query, parameters) => withoutDriverStack(() => run(query, parameters))) as ManagedTransaction['run'] });
}

/** Maps a neo4j-driver error to our typed errors, in one place, with a fix in the message. */
export function mapNeo4jError(err: unknown, ctx: { uri: string; database: string; subsystem?: string; op?: string }): MnemographError {
  if (err instanceof MnemographError) return err;
  const code = (err as { code?: string }).code ?? '';
  const msg = errorMessage(err);
  const details = { neo4jCode: code, ...ctx };
  if (code === 'ServiceUnavailable' || code === 'SessionExpired' || (/ECONNREFUSED|connect/i.test(code + msg) && !code.startsWith('Neo.'))) {
    return new StoreUnavailableError('neo4j', `Neo4j at ${ctx.uri} is unreachable (${msg}); start it with \`npm run stack:up\` or fix NEO4J_URI`, details, err);
  }
  if (code === 'Neo.TransientError.General.DatabaseUnavailable') {
    return new StoreUnavailableError('neo4j', `Neo4j at ${ctx.uri} is not serving database "${ctx.database}" yet (starting or recovering: ${msg}); retry shortly`, details, err);
  }
  if (code === 'Neo.ClientError.Security.Unauthorized' || code === 'Neo.ClientError.Security.AuthenticationRateLimit') {
    return new StoreUnavailableError('neo4j', `Neo4j at ${ctx.uri} rejected the credentials; fix NEO4J_USER / NEO4J_PASSWORD`, details, err);
  }
  if (code === 'Neo.ClientError.Database.DatabaseNotFound') {
    return new StoreUnavailableError('neo4j', `Neo4j database "${ctx.database}" does not exist; fix NEO4J_DATABASE (Community Edition has only "neo4j")`, details, err);
  }
  if (code === 'Neo.ClientError.Schema.ConstraintValidationFailed') {
    return new ValidationError(`a uniqueness constraint refused the write: ${msg}`, details);
  }
  if (code.startsWith('Neo.ClientError.Schema.') || (code.startsWith('Neo.ClientError.Procedure.ProcedureCallFailed') && /index/i.test(msg))) {
    return new SchemaError(`Neo4j schema problem: ${msg}; run \`npm run migrate\``, details);
  }
  if (code.startsWith('Neo.TransientError.')) {
    return new StoreUnavailableError('neo4j', `Neo4j transient failure after retries: ${msg}`, details, err);
  }
  return new MnemographError('NEO4J_FAILED', 'system', `Neo4j query failed: ${msg}`, details, { cause: err });
}

/** Waits until the server answers `getServerInfo`, or throws the mapped error at the deadline. */
export async function waitForNeo4j(driver: Driver, ctx: { uri: string; database: string }, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      await driver.getServerInfo({ database: ctx.database });
      return;
    } catch (err) {
      const mapped = mapNeo4jError(err, ctx);
      const retryable = mapped.code === 'STORE_UNAVAILABLE' && !/credentials|does not exist/.test(mapped.message);
      if (!retryable || Date.now() > until) throw mapped;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** The most rows asked of an index that cannot filter before giving up on more. */
export const MAX_OVERFETCH = 5_000;
