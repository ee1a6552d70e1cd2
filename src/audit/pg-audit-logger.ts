import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Queryable } from '../infra/postgres';
import type { Logger } from '../infra/logger';
import { TenantNamespace } from '../access/namespace';
import { currentActor, type AuditActor } from './actor';
import type { AuditLevel, AuditLogger, AuditRecord, PromotionEvent, ReadEvent, WriteEvent } from './contract';

const COLUMNS = [
  'timestamp',
  'operation',
  'memory_type',
  'user_id',
  'session_id',
  'conversation_id',
  'source_channel',
  'target_channels',
  'affected_ids',
  'query_text',
  'result_count',
  'latency_ms',
  'success',
  'error_message',
  'promoted_from_channel',
  'promotion_confidence',
  'promotion_access_count',
  'promotion_conversation_count',
  'config_snapshot',
  'metadata',
] as const;
/** The actor's columns (sql/006), in actorValues order. */
const ACTOR_COLUMNS = ['tenant_id', 'key_id', 'agent_id', 'surface', 'request_id', 'job_name', 'job_run_id'] as const;

// $1 user ids, $2 memory ids, $3 operations -> {id}: those of $2 some row of $3 about $1 names (idx_audit_user narrows)
const UNRECORDED = 'SELECT DISTINCT a AS id FROM memory_audit_log, unnest(affected_ids) a WHERE user_id = ANY($1) AND operation = ANY($3) AND a = ANY($2)';

// $1 days -> created count; called when a row has no partition to land in
const ENSURE_PARTITIONS = "SELECT ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date - 1, $1::int)";

export interface PgAuditOptions {
  level: AuditLevel;
  /** AUDIT_SPOOL_DIR: the logger spools into a folder of its own in it for `database` (spoolFolder). */
  spoolDir: string;
  /**
   * The database the rows are for (its URL; the password is not used). It names the spool
   * folder, so that a process on another database sharing AUDIT_SPOOL_DIR (every process
   * started in one checkout does) never replays these rows into its own.
   */
  database: string;
  /** Settings that shaped each operation (thresholds, models, weights), stored on each row. */
  configSnapshot: Record<string, unknown>;
  batchSize?: number;
  flushIntervalMs?: number;
}

/**
 * Batched, durable audit writer. Rows wait in memory at most `flushIntervalMs`; a failed
 * insert moves the batch to a JSONL spool file, which is replayed (oldest first) on the
 * next successful flush. On close, whatever remains is written or spooled: nothing queued
 * is dropped.
 */
export class PgAuditLogger implements AuditLogger {
  readonly level: AuditLevel;
  private queue: AuditRecord[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  private readonly spoolDir: string;

  constructor(
    private readonly db: Queryable,
    private readonly opts: PgAuditOptions,
    private readonly log: Logger,
  ) {
    this.level = opts.level;
    this.batchSize = opts.batchSize ?? 200;
    this.spoolDir = join(opts.spoolDir, spoolFolder(opts.database));
    warnOfUnclaimedSpool(opts.spoolDir, log);
    this.timer = setInterval(() => void this.flush().catch(() => undefined), opts.flushIntervalMs ?? 250); // failures are logged by flush
    this.timer.unref();
  }

  logWrite(e: WriteEvent): void {
    if (this.level === 'off') return;
    this.enqueue({
      timestamp: new Date(),
      operation: e.operation,
      memoryType: e.memoryType,
      userId: e.userId,
      sessionId: e.sessionId,
      conversationId: e.conversationId,
      sourceChannel: e.channel,
      targetChannels: [e.channel],
      affectedIds: e.affectedIds,
      latencyMs: e.latencyMs,
      metadata: { ...e.metadata, ...(this.level === 'verbose' && e.payload ? { payload: e.payload } : {}) },
    });
  }

  logRead(e: ReadEvent): void {
    if (this.level !== 'reads' && this.level !== 'verbose') return;
    this.enqueue({
      timestamp: new Date(),
      operation: e.operation,
      memoryType: e.memoryType,
      userId: e.userId,
      sourceChannel: e.channel,
      targetChannels: e.channelsSearched,
      affectedIds: e.affectedIds,
      queryText: e.query,
      resultCount: e.resultCount,
      latencyMs: e.latencyMs,
      metadata: { ...e.metadata, ...(this.level === 'verbose' && e.payload ? { payload: e.payload } : {}) },
    });
  }

  logPromotion(e: PromotionEvent): void {
    if (this.level === 'off') return;
    this.enqueue({
      timestamp: new Date(),
      operation: 'promote',
      memoryType: 'semantic',
      userId: e.userId,
      sourceChannel: e.sourceChannel,
      targetChannels: ['_global'],
      affectedIds: [e.factId, e.newFactId],
      promotedFromChannel: e.sourceChannel,
      promotionConfidence: e.confidence,
      promotionAccessCount: e.accessCount,
      promotionConversationCount: e.conversationCount,
      metadata: { reason: e.reason, thresholds: e.thresholds },
    });
  }

  /** Queues a row with the actor of the code running now (src/audit/actor.ts). */
  private enqueue(record: AuditRecord): void {
    this.queue.push({ ...record, actor: rowActor(currentActor(), record.userId) });
    if (this.queue.length >= this.batchSize) void this.flush().catch(() => undefined); // logged by flush
  }

  /** Writes everything queued so far (or spools it); serialised so batches stay in order. */
  async unrecorded(userIds: string[], ids: string[], operations: string[]): Promise<string[]> {
    if (this.level === 'off' || ids.length === 0) return [];
    await this.flush();
    const found = await this.db.query<{ id: string }>(UNRECORDED, [userIds, ids, operations]);
    const seen = new Set(found.rows.map((r) => r.id));
    return ids.filter((id) => !seen.has(id));
  }

  flush(): Promise<void> {
    const run = this.flushing.then(() => this.drain());
    // A drain that fails (the spool folder unwritable) fails its callers, not every later flush.
    this.flushing = run.catch((err: unknown) => this.log.error({ subsystem: 'audit', err: (err as Error).message }, 'audit flush failed; the rows stay queued'));
    return run;
  }

  private async drain(): Promise<void> {
    await this.replaySpool();
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.batchSize);
      try {
        await this.insert(batch);
      } catch (err) {
        // Postgres is down: spool the rest without trying each batch against it.
        const rest = this.queue.splice(0);
        try {
          this.spool([...batch, ...rest], err);
        } catch (spoolErr) {
          this.queue.unshift(...batch, ...rest); // neither written nor spooled: keep them for the next flush
          throw spoolErr;
        }
      }
    }
  }

  private async insert(batch: AuditRecord[]): Promise<void> {
    if (batch.length === 0) return;
    const params: unknown[] = [];
    // Oldest first: the chain trigger locks each day's head in row order, so two writers
    // holding rows of two days lock them in the same order and never deadlock.
    const ordered = [...batch].sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());
    const rows = ordered.map((r) => {
      const values = [
        r.timestamp,
        r.operation,
        r.memoryType,
        r.userId ?? null,
        r.sessionId ?? null,
        r.conversationId ?? null,
        r.sourceChannel ?? null,
        r.targetChannels ?? null,
        r.affectedIds ?? null,
        r.queryText ?? null,
        r.resultCount ?? null,
        r.latencyMs === undefined ? null : Math.round(r.latencyMs),
        r.success ?? true,
        r.errorMessage ?? null,
        r.promotedFromChannel ?? null,
        r.promotionConfidence ?? null,
        r.promotionAccessCount ?? null,
        r.promotionConversationCount ?? null,
        this.opts.configSnapshot,
        r.metadata ?? {},
        ...actorValues(r.actor),
      ];
      const placeholders = values.map((v) => {
        params.push(v);
        return `$${params.length}`;
      });
      return `(${placeholders.join(', ')})`;
    });
    const sql = `INSERT INTO memory_audit_log (${[...COLUMNS, ...ACTOR_COLUMNS].join(', ')}) VALUES ${rows.join(', ')}`;
    try {
      await this.db.query(sql, params);
    } catch (err) {
      // 23514: no partition for the row's day (the worker has not created it yet).
      if ((err as { code?: string }).code !== '23514') throw err;
      await this.db.query(ENSURE_PARTITIONS, [8]);
      await this.db.query(sql, params);
    }
  }

  private spool(batch: AuditRecord[], err: unknown): void {
    mkdirSync(this.spoolDir, { recursive: true });
    const file = join(this.spoolDir, `audit-${Date.now()}-${process.pid}.jsonl`);
    appendFileSync(file, batch.map((r) => JSON.stringify(r)).join('\n') + '\n');
    this.log.warn({ subsystem: 'audit', rows: batch.length, file, err: (err as Error).message }, 'audit rows spooled to disk; they are replayed when PostgreSQL answers');
  }

  /** Replays spool files oldest first; a file is removed only after its rows are in Postgres. */
  private async replaySpool(): Promise<void> {
    if (!existsSync(this.spoolDir)) return;
    const files = readdirSync(this.spoolDir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    for (const name of files) {
      const file = join(this.spoolDir, name);
      const claimed = `${file}.replaying`;
      try {
        renameSync(file, claimed); // another process may be replaying the same spool
      } catch {
        continue;
      }
      const records = readFileSync(claimed, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const r = JSON.parse(l) as AuditRecord & { timestamp: string };
          return { ...r, timestamp: new Date(r.timestamp) };
        });
      let done = 0;
      try {
        for (; done < records.length; done += this.batchSize) await this.insert(records.slice(done, done + this.batchSize));
        unlinkSync(claimed);
      } catch {
        // Keep only what did not make it, so a later replay inserts no row twice.
        writeFileSync(
          file,
          records
            .slice(done)
            .map((r) => JSON.stringify(r))
            .join('\n') + '\n',
        );
        unlinkSync(claimed);
        return;
      }
    }
  }

  /** Stops the timer and writes (or spools) everything still queued. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/**
 * The spool folder of a database, readable: `<database>@<host>-<port>` of its URL (user and
 * password left out), characters outside [A-Za-z0-9._@-] as `_`.
 */
export function spoolFolder(databaseUrl: string): string {
  let name: string;
  try {
    const u = new URL(databaseUrl);
    name = `${decodeURIComponent(u.pathname.slice(1)) || 'postgres'}@${u.hostname || 'localhost'}-${u.port || '5432'}`;
  } catch {
    name = `db-${createHash('sha256').update(databaseUrl).digest('hex').slice(0, 16)}`;
  }
  return name.replace(/[^A-Za-z0-9._@-]/g, '_');
}

/**
 * Spool files directly in AUDIT_SPOOL_DIR were written before spools had a folder per
 * database: which database they belong to is unknown, so none is replayed; say so once.
 */
function warnOfUnclaimedSpool(root: string, log: Logger): void {
  const files = existsSync(root) ? readdirSync(root).filter((f) => f.endsWith('.jsonl')) : [];
  if (files.length === 0) return;
  log.warn(
    { subsystem: 'audit', dir: root, files: files.length },
    'audit spool files of an unknown database (written before spools had a folder per database) are not replayed: move each into the folder of its database (AUDIT_SPOOL_DIR/<database>@<host>-<port>) to replay it',
  );
}

/**
 * The actor a row carries. The worker acts for no API key: its rows take the tenant whose
 * namespace holds the user the job acted on, so a tenant's reviewer sees them.
 */
function rowActor(actor: AuditActor, userId: string | undefined): AuditActor {
  if (actor.tenantId !== null || actor.surface !== 'worker' || !userId) return actor;
  return { ...actor, tenantId: TenantNamespace.tenantOf(userId) };
}

/** The actor columns' values, in ACTOR_COLUMNS order. */
export function actorValues(a: AuditActor | undefined): unknown[] {
  return [a?.tenantId ?? null, a?.keyId ?? null, a?.agentId ?? null, a?.surface ?? null, a?.requestId ?? null, a?.job ?? null, a?.runId ?? null];
}

/** The actor as column name -> value (for SQL functions that write rows themselves, sql/011). */
export function actorColumns(a: AuditActor | undefined): Record<string, unknown> {
  const values = actorValues(a);
  return Object.fromEntries(ACTOR_COLUMNS.map((c, i) => [c, values[i]]));
}
