import type { AuditTrail } from '../audit/contract';
import { SchemaError, ValidationError } from '../errors';
import type { Queryable } from '../infra/postgres';
import { userTables } from './pg-user-rows';
import { emptyErasureReport, type AgentView, type ErasureReport, type ExportLine, type UserDataPart, type UserStats } from './user-data';
import type { UserWriteFence } from './user-fence';

export type { ErasureReport, ExportLine, NodeRef, UserDataPart, UserStats } from './user-data';

// Tables with a user_id that are not the user's memory: the audit trail (erased apart, keeps the
// erasure record), the record of erasures (which keeps late audit rows out, sql/005) and the
// tenancy registry (its keys are external ids, handled by the caller).
const NOT_MEMORY = new Set(['memory_audit_log', 'user_erasures', 'tenant_users']);
// $1 user -> nothing: from now on, audit rows about the user timestamped before this moment are dropped
const RECORD_ERASURE = `INSERT INTO user_erasures (user_id, erased_at) VALUES ($1, NOW())
  ON CONFLICT (user_id) DO UPDATE SET erased_at = EXCLUDED.erased_at`;

/**
 * Whole-user operations across every store: statistics, export, import and erasure,
 * composed from each store's UserDataPart (listed once, in the composition root, in
 * import order: the graph before the tables). A Postgres table with a `user_id` column
 * that no part claims makes every operation fail with the table's name, so a new kind of
 * memory cannot be left out of export or forget-user.
 */
export class UserDataStore {
  constructor(
    private readonly parts: readonly UserDataPart[],
    private readonly pg: Queryable,
    private readonly audit: AuditTrail,
    private readonly opts: {
      /** Runs first (the audit logger's flush, so queued rows about the user are written and then redacted). */
      beforeErase?: () => Promise<void>;
      /** Runs once the user's data is gone from every part (caches of it in the process). */
      afterErase?: (userId: string) => Promise<void>;
      /** How long after the first sweep the second runs (config ERASURE_GRACE_MS). */
      graceMs?: number;
      /** The per-user erasure fence the API's writes enter; without one, only the two sweeps guard the erasure. */
      fence?: UserWriteFence;
    } = {},
  ) {}

  /** The graph's nodes per label of each user (non-zero only), for a listing of many users; empty records when no part counts nodes. */
  async nodeCounts(userIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
    const counter = this.parts.find((p): p is UserDataPart & Required<Pick<UserDataPart, 'nodeCounts'>> => typeof p.nodeCounts === 'function');
    return counter ? counter.nodeCounts(userIds) : new Map(userIds.map((u) => [u, {}]));
  }

  /** Counts of the user's nodes per label and rows per table (only non-zero entries), and Redis keys; with `view`, what that agent may see. */
  async stats(userId: string, view?: AgentView): Promise<UserStats> {
    await this.assertComplete();
    const stats: UserStats = { userId, nodes: {}, rows: {}, workingKeys: 0 };
    for (const part of this.parts) await part.stats(userId, stats, view);
    return stats;
  }

  /** Streams the user's memory as export lines (working memory is ephemeral and not exported); with `view`, what that agent may see. */
  async *export(userId: string, view?: AgentView): AsyncGenerator<ExportLine> {
    await this.assertComplete();
    yield { kind: 'header', format: 'mnemograph-user-export', version: 1, userId, exportedAt: new Date().toISOString() };
    for (const part of this.parts) yield* part.export(userId, view);
  }

  /**
   * Restores export lines. Idempotent: nodes with an `id` are merged on it, relationships
   * merged, rows inserted with ON CONFLICT DO NOTHING. Every line must belong to `userId`
   * (the header's user, or the one given), else nothing is written.
   */
  async import(lines: ExportLine[], opts: { userId?: string; onProgress?: (done: number, total: number) => void } = {}): Promise<{ nodes: number; relationships: number; rows: number }> {
    const header = lines[0];
    if (!header || header.kind !== 'header' || header.format !== 'mnemograph-user-export') throw new ValidationError('invalid import: the first line must be a mnemograph-user-export header');
    const userId = opts.userId ?? header.userId;
    if (header.userId !== userId) throw new ValidationError(`invalid import: the file holds user ${header.userId}, not ${userId}`);
    await this.assertComplete();
    const body = lines.slice(1);
    const byPart = this.parts.map((part) => ({ part, lines: body.filter((l) => part.owns(l)) }));
    for (const l of body) {
      if (this.parts.some((p) => p.owns(l))) continue;
      throw new ValidationError(l.kind === 'row' ? `invalid import: unknown table ${l.table}` : `invalid import: a ${l.kind} line is not part of an export`);
    }
    for (const { part, lines: mine } of byPart) await part.check(mine, userId);

    const total = body.length;
    const out = { nodes: 0, relationships: 0, rows: 0 };
    let before = 0;
    for (const { part, lines: mine } of byPart) {
      if (mine.length === 0) continue;
      const r = await part.import(mine, (done) => opts.onProgress?.(before + done, total));
      out.nodes += r.nodes;
      out.relationships += r.relationships;
      out.rows += r.rows;
      before += mine.length;
    }
    return out;
  }

  /**
   * Erases the user from every part (Neo4j, Postgres, Redis), redacts the user's audit rows
   * (their personal columns go, their hashes stay: sql/007) and writes one audit record of
   * the erasure. Shared nodes (tools, the embedding model) stay.
   *
   * The erasure runs behind the user's write fence (UserWriteFence): writes through the API
   * and MCP that entered before it are waited for, writes arriving while it runs are refused
   * (409 USER_BEING_ERASED), and `then` (the tenant's unregistration) runs before the fence
   * opens, so nothing written after can be left unregistered; with `openAfter` (the API's
   * answer being sent) the fence stays closed until the caller has its answer. Two sweeps: a write that does
   * not pass the fence (a library caller, an observation batch whose transaction holds its
   * rows, which the table delete waits for) may land after the first; the second,
   * `graceMs` later, removes it. A consolidation run checks that its conversation still
   * exists before it writes what it extracted.
   */
  async erase(userId: string, opts: { then?: () => Promise<void>; openAfter?: Promise<unknown> } = {}): Promise<ErasureReport> {
    await this.assertComplete();
    const run = async () => {
      await this.opts.beforeErase?.();
      const report = emptyErasureReport(userId);
      await this.sweep(userId, report);
      await new Promise((r) => setTimeout(r, this.opts.graceMs ?? 1000));
      await this.sweep(userId, report);
      await this.opts.afterErase?.(userId);
      // Recorded before the redaction, so an audit row still queued or spooled elsewhere cannot land after it.
      await this.pg.query(RECORD_ERASURE, [userId]);
      // The audit rows stay, hashes and all, without their personal columns; the erasure record
      // names the redaction (time and count), which is how `audit verify` tells it from an edit.
      const redactedAt = new Date();
      report.auditRowsRedacted = await this.audit.redactUserRows(userId, redactedAt);
      const receipt = await this.audit.recordUserErased(userId, { ...report, auditRedactedAt: redactedAt.toISOString() });
      await opts.then?.();
      // JSON text, handed on as it is (the API does not rewrite the ids in it): `mnemograph audit verify-receipt` checks it.
      return { ...report, receipt: JSON.stringify(receipt) };
    };
    return this.opts.fence ? this.opts.fence.closed(userId, run, { openAfter: opts.openAfter }) : run();
  }

  private async sweep(userId: string, report: ErasureReport): Promise<void> {
    for (const part of this.parts) await part.erase(userId, report);
  }

  /** Every user-owned table is claimed by a part (or is not memory). */
  private async assertComplete(): Promise<void> {
    const claimed = new Set(this.parts.flatMap((p) => p.tables));
    const left = (await userTables(this.pg)).map((t) => t.table).filter((t) => !claimed.has(t) && !NOT_MEMORY.has(t));
    if (left.length > 0) {
      throw new SchemaError(`table ${left.join(', ')} holds per-user rows (a user_id column) but no UserDataPart claims it; add its store's part to the list in src/container.ts`, { tables: left });
    }
  }
}
