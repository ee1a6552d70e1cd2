import type { AuditActor } from './actor';
import type { AuditRow, MemoryType } from './schema';

export type { AuditActor, AuditSurface } from './actor';
export type AuditLevel = 'off' | 'writes' | 'reads' | 'verbose';

/** One row of `memory_audit_log`. */
export interface AuditRecord {
  timestamp: Date;
  operation: string;
  memoryType: MemoryType;
  userId?: string;
  sessionId?: string;
  conversationId?: string;
  sourceChannel?: string;
  targetChannels?: string[];
  affectedIds?: string[];
  queryText?: string;
  resultCount?: number;
  latencyMs?: number;
  success?: boolean;
  errorMessage?: string;
  promotedFromChannel?: string;
  promotionConfidence?: number;
  promotionAccessCount?: number;
  promotionConversationCount?: number;
  metadata?: Record<string, unknown>;
  /** Who acted (read from the actor context when the row was queued; kept through the spool). */
  actor?: AuditActor;
}

export interface WriteEvent {
  operation: string;
  memoryType: MemoryType;
  userId: string;
  channel: string;
  conversationId?: string;
  sessionId?: string;
  affectedIds: string[];
  latencyMs?: number;
  /** Kept only at `verbose` (payloads can be large or sensitive). */
  payload?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface ReadEvent {
  operation: string;
  memoryType: MemoryType;
  userId: string;
  channel: string;
  query: string;
  channelsSearched: string[];
  resultCount: number;
  latencyMs: number;
  /** The ids of the items returned (seed 000's context log: which memories reached which agent). */
  affectedIds?: string[];
  payload?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface PromotionEvent {
  userId: string;
  factId: string;
  newFactId: string;
  sourceChannel: string;
  reason: string;
  confidence: number;
  accessCount: number;
  conversationCount: number;
  thresholds: Record<string, number>;
}

/**
 * The audit trail for compliance. Calls never block on Postgres: records are queued and
 * written in batches; while Postgres is down they are spooled to disk and replayed later.
 * `flush()` resolves when everything queued so far is in Postgres or the spool.
 */
export interface AuditLogger {
  readonly level: AuditLevel;
  logWrite(event: WriteEvent): void;
  logRead(event: ReadEvent): void;
  logPromotion(event: PromotionEvent): void;
  flush(): Promise<void>;
  /**
   * Of `ids` (memory ids of `userIds`), those no write row of `operations` names yet, after
   * flushing what is queued: a repeated write finds what an earlier attempt acknowledged to
   * nobody left unaudited (its process stopped, or its answer was a 503 after the commit).
   * Empty at level `off`. Reads PostgreSQL; fails with StoreUnavailableError while it is away.
   */
  unrecorded(userIds: string[], ids: string[], operations: string[]): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The audit trail's own upkeep: its daily partitions (sql/001's functions) and the erasure
 * of one user's rows. Separate from AuditLogger, whose calls never touch Postgres directly.
 * Rows written here carry the current actor (src/audit/actor.ts) like the logger's.
 */
export interface AuditTrail {
  /** Creates the daily partitions from `firstDay` (YYYY-MM-DD, UTC) for `days` days; returns how many were new. Idempotent. */
  ensurePartitions(firstDay: string, days: number): Promise<number>;
  /**
   * Drops the partitions older than `retentionDays`; returns how many. Idempotent. When it
   * drops any, it writes one chained `audit_retention` row naming the last day dropped, which
   * lets verification tell retention from a partition dropped by hand.
   */
  dropPartitionsBefore(retentionDays: number): Promise<number>;
  /**
   * Blanks the personal columns (PERSONAL_AUDIT_COLUMNS) of every audit row about the user
   * except earlier erasure records, marking them `redacted_at = at`; their hashes stay, so
   * the chain still verifies. Returns how many rows were redacted.
   */
  redactUserRows(userId: string, at: Date): Promise<number>;
  /**
   * Writes the one row that outlives an erasure (`forget_user`, the report as metadata). The
   * report names `auditRowsRedacted` and `auditRedactedAt` (ISO): verification checks that
   * every redacted row is covered by such a record. Resolves to the record's receipt
   * (`erasureReceipt`): its place in the chain and the report's counts, for the requester.
   */
  recordUserErased(userId: string, report: Record<string, unknown>): Promise<ErasureReceipt>;
  /**
   * Writes one chained row for a deletion no user's call made (a worker job's expiry): what
   * went, by kind and count (`metadata.deleted`), never content. Written at once, not
   * queued, with the current actor (the job and its run).
   */
  recordDeletion(operation: string, memoryType: MemoryType, deleted: Record<string, number>): Promise<void>;
}

/**
 * A receipt of one forget-user: where its erasure record (the `forget_user` audit row) sits in
 * the hash chain and what it says went, so a reviewer can check later that the record is still
 * there, unchanged, in a chain that verifies. Counts and ids only, never content.
 */
export interface ErasureReceipt {
  kind: 'mnemograph.erasure-receipt';
  version: 1;
  /** memory_audit_log.id of the erasure record. */
  recordId: string;
  /** Its timestamp (ISO, UTC, milliseconds) and its UTC day (YYYY-MM-DD, the day's chain). */
  recordedAt: string;
  day: string;
  /** Its position in the day's chain and its hashes (hex), as sql/007 computed them. */
  chainSeq: number;
  contentHash: string;
  rowHash: string;
  /** The erased user: as stored (internal, tenant-namespaced), or as `tenantId` knows it (the API's receipts). */
  userId: string;
  /** The tenant whose id `userId` is (absent: `userId` is as stored). */
  tenantId?: string;
  /** What went, by kind: the erasure report's counts (nodes, rows per table, keys, audit rows redacted). */
  counts: Record<string, number | Record<string, number>>;
}

/** The erasure record as `memory_audit_log` returns it (an INSERT ... RETURNING or a SELECT). */
export interface ErasureRecordRow {
  id: string;
  timestamp: Date;
  operation: string;
  chain_seq: string | number | null;
  content_hash: Buffer | null;
  row_hash: Buffer | null;
  user_id: string | null;
  metadata: Record<string, unknown> | null;
}

/** Where a chain breaks: the first row (or day head) that does not verify. */
export interface ChainBreak {
  /** The UTC day (YYYY-MM-DD) whose chain breaks. */
  day: string;
  /** The row that breaks it (null: the day's head, e.g. rows deleted from the end of the day). */
  id: string | null;
  timestamp: string | null;
  /** Its position in the day's chain. */
  seq: number | null;
  reason: string;
}

export interface ChainReport {
  ok: boolean;
  rowsChecked: number;
  daysChecked: number;
  redactedRows: number;
  /** The last day retention dropped (YYYY-MM-DD, from its chained `audit_retention` records); null: none. */
  droppedThrough: string | null;
  /** The first break, in day and chain order; null when everything verifies. */
  firstBreak: ChainBreak | null;
}

/**
 * Verifies the hash chain of `memory_audit_log` (sql/007, sql/011): each row's content
 * digest, its link to the previous row of its day, each day's head (its seal, and its link
 * to the head opened before it, which must be there unless retention dropped it), that a
 * missing partition is covered by a retention record, and that every redacted row is
 * covered by a chained erasure record.
 */
export interface AuditChain {
  /**
   * Checks every day from `since` (YYYY-MM-DD, UTC; default: every day) in one consistent
   * snapshot, streaming rows so memory stays bounded; stops at the first break.
   */
  verify(since?: string): Promise<ChainReport>;
}

export * from './schema';

/**
 * Whose rows a read covers: one tenant's (by the `tenant_id` column; what every API
 * caller gets), or every row (the operator's CLI without --tenant).
 */
export type AuditScope = { readonly tenantId: string } | { readonly allTenants: true };

/** What narrows a read of the audit log; user ids are internal (tenant-namespaced), as the stores keep them. */
export interface AuditFilter {
  userId?: string;
  operation?: string;
  memoryType?: string;
  channel?: string;
  keyId?: string;
  agentId?: string;
  surface?: string;
  since?: Date;
  until?: Date;
  success?: boolean;
}

/**
 * The audit log for reviewers: rows as stored (internal ids; the API maps user,
 * conversation and affected ids to the tenant's own). Pages newest first with an opaque keyset cursor on
 * (timestamp, id), and every matching row oldest first as a stream, in bounded memory.
 */
export interface AuditReader {
  /** One page, newest first; `nextCursor` is null on the last page. A malformed cursor is a ValidationError. */
  page(scope: AuditScope, filter: AuditFilter, opts: { cursor?: string; limit: number }): Promise<{ rows: AuditRow[]; nextCursor: string | null }>;
  /**
   * Every matching row, oldest first, read through a server-side cursor in batches: memory
   * stays bounded however many rows match, and a slow consumer pauses the read. Breaking
   * out of the loop (or an error) releases the connection.
   */
  stream(scope: AuditScope, filter: AuditFilter): AsyncIterable<AuditRow>;
}
