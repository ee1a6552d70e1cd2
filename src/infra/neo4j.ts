import neo4j, { type Driver, type ManagedTransaction, type RecordShape } from 'neo4j-driver';
import { MnemographError, StoreUnavailableError, ValidationError, SchemaError, errorMessage } from '../errors';

/** Who runs a query: recorded as transaction metadata, visible in `SHOW TRANSACTIONS` and query logs. */
export interface QueryTag {
  subsystem: string;
  op: string;
}

/**
 * The one door to Neo4j. Always managed (retried) read/write transactions, always
 * parameters, always tagged with the subsystem and operation. Errors leave mapped.
 */
export interface CypherRunner {
  /** Runs a read query in a managed read transaction (routed to readers on a cluster). */
  read<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]>;
  /** Runs a write query in a managed write transaction; retried on transient errors. */
  write<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]>;
  /** Runs several statements in one managed write transaction (all or nothing). */
  writeTx<R>(work: (tx: ManagedTransaction) => Promise<R>, tag: QueryTag): Promise<R>;
}

/** What the driver is built from (part of `Config['neo4j']`; declared here so drivers do not depend on config). */
export interface Neo4jConnection {
  uri: string;
  user: string;
  password: string;
}

export function createNeo4jDriver(config: Neo4jConnection): Driver {
  return neo4j.driver(config.uri, neo4j.auth.basic(config.user, config.password), {
    disableLosslessIntegers: true,
    maxConnectionPoolSize: 50,
    connectionAcquisitionTimeout: 10_000,
    connectionTimeout: 5_000,
    maxTransactionRetryTime: 10_000,
    userAgent: 'mnemograph/0.1',
  });
}

export class Neo4jExecutor implements CypherRunner {
  constructor(
    private readonly driver: Driver,
    private readonly database: string,
    private readonly uri: string,
  ) {}

  async read<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]> {
    return this.session('READ', tag, async (tx) => (await tx.run<T>(cypher, params)).records.map((r) => r.toObject()));
  }

  async write<T extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown>, tag: QueryTag): Promise<T[]> {
    return this.session('WRITE', tag, async (tx) => (await tx.run<T>(cypher, params)).records.map((r) => r.toObject()));
  }

  async writeTx<R>(work: (tx: ManagedTransaction) => Promise<R>, tag: QueryTag): Promise<R> {
    return this.session('WRITE', tag, work);
  }

  private async session<R>(mode: 'READ' | 'WRITE', tag: QueryTag, work: (tx: ManagedTransaction) => Promise<R>): Promise<R> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE });
    const txConfig = { metadata: { app: 'mnemograph', subsystem: tag.subsystem, op: tag.op } };
    try {
      return mode === 'READ' ? await session.executeRead(work, txConfig) : await session.executeWrite(work, txConfig);
    } catch (err) {
      throw mapNeo4jError(err, { uri: this.uri, database: this.database, ...tag });
    } finally {
      await session.close();
    }
  }
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

/**
 * One filtered index query (k = 4 × limit, 100 to 2,000); when fewer than `limit` rows
 * survive the filter, the caller's nodes are a small share of the index, and `fallback`
 * answers instead: an exact query over the caller's own nodes. Two round trips at most
 * (widening k step by step would cost up to four, each slower than the last, for a user
 * who has few nodes at all). For vector indexes, which cannot require an owner inside the
 * index as the full-text ones do (infra/fulltext-scope).
 */
export async function indexOrFallback<T>(limit: number, index: (k: number) => Promise<T[]>, fallback: () => Promise<T[]>): Promise<T[]> {
  const found = await index(Math.min(Math.max(limit * 4, 100), 2_000));
  return found.length >= limit ? found : fallback();
}
