import * as z from 'zod';
import { ChannelSchema, UserIdSchema } from '../schemas';

/*
 * The audit log's wire contract (GET /v1/audit, GET /v1/audit/export): filters and rows.
 * Zod only (`import * as z`), so the browser client bundles it. Query-string inputs are
 * strings; the schemas turn them into typed filters.
 */

export const AUDIT_SURFACES = ['http', 'mcp', 'cli', 'worker'] as const;
export const AUDIT_MEMORY_TYPES = ['episodic', 'semantic', 'procedural', 'working', 'short_term', 'shared', 'system'] as const;
export type MemoryType = (typeof AUDIT_MEMORY_TYPES)[number];
export const AUDIT_EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** Most rows one page returns. */
export const AUDIT_PAGE_MAX = 500;

const Instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .describe('ISO 8601 time (e.g. 2025-03-01T09:30:00Z) or UTC date (2025-03-01)')
  .transform((s) => new Date(s));

/** The filters both audit routes take. All optional; each one narrows the rows. */
const AuditFilterShape = {
  userId: UserIdSchema.optional().describe('rows about this user (the tenant’s user id)'),
  operation: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,49}$/, 'must be an operation name such as store_turn, remember, forget_user')
    .optional()
    .describe('e.g. store_turn, store_fact, retract_fact, remember, forget_user'),
  memoryType: z.enum(AUDIT_MEMORY_TYPES).optional(),
  channel: ChannelSchema.unwrap().optional().describe('rows written to this channel, or reads that searched it (no default: absent means every channel)'),
  keyId: z
    .string()
    .regex(/^[a-z0-9]{12}$/, 'must be an API key id (12 lowercase letters or digits, the part after mg_)')
    .optional()
    .describe('the API key that acted (its id, never the key)'),
  agentId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, _, - or .')
    .optional()
    .describe('the agent the acting key is bound to'),
  surface: z.enum(AUDIT_SURFACES).optional().describe('where the operation came in'),
  since: Instant.optional().describe('rows at or after this time'),
  until: Instant.optional().describe('rows before this time'),
  success: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('only successful (true) or failed (false) operations'),
};

const sinceBeforeUntil = (f: { since?: Date; until?: Date }) => !f.since || !f.until || f.since < f.until;
const RANGE_MESSAGE = { message: 'since must be before until', path: ['until'] };

/** GET /v1/audit: filters, an opaque cursor from the previous page, and the page size. */
export const AuditQuerySchema = z
  .object({
    ...AuditFilterShape,
    cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, `must be a whole number from 1 to ${AUDIT_PAGE_MAX}`)
      .transform(Number)
      .pipe(z.number().int().min(1).max(AUDIT_PAGE_MAX))
      .optional()
      .describe(`rows per page, 1-${AUDIT_PAGE_MAX} (default 100)`),
  })
  .strict()
  .refine(sinceBeforeUntil, RANGE_MESSAGE);

/** GET /v1/audit/export: the same filters (every matching row, oldest first) and the format. */
export const AuditExportQuerySchema = z
  .object({ ...AuditFilterShape, format: z.enum(AUDIT_EXPORT_FORMATS).default('jsonl').describe('csv (text/csv) or jsonl (application/x-ndjson, one AuditRow per line)') })
  .strict()
  .refine(sinceBeforeUntil, RANGE_MESSAGE);

export const AuditActorSchema = z.object({
  tenantId: z.string().nullable(),
  keyId: z.string().nullable().describe('the API key id (never the key)'),
  agentId: z.string().nullable(),
  surface: z.string().nullable().describe('http, mcp, cli or worker'),
  requestId: z.string().nullable(),
  job: z.string().nullable().describe('the worker job, for rows the worker wrote'),
  runId: z.string().nullable().describe('the worker job run (worker_job_runs id)'),
});

/** One audit row as a reviewer reads it: user and conversation ids are the tenant's own. */
export const AuditRowSchema = z
  .object({
    id: z.string(),
    timestamp: z.string().describe('ISO 8601, UTC, microseconds'),
    operation: z.string(),
    memoryType: z.string(),
    userId: z.string().nullable(),
    sessionId: z.string().nullable(),
    conversationId: z.string().nullable(),
    channel: z.string().nullable().describe('the channel written to, or the first channel a read asked for'),
    channels: z.array(z.string()).describe('the channels written or searched'),
    affectedIds: z.array(z.string()).describe('ids written, or for reads the ids returned'),
    queryText: z.string().nullable(),
    resultCount: z.number().int().nullable(),
    latencyMs: z.number().int().nullable(),
    success: z.boolean(),
    errorMessage: z.string().nullable(),
    actor: AuditActorSchema,
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditRow' });

export const AuditPageSchema = z.object({
  rows: z.array(AuditRowSchema).describe('newest first'),
  nextCursor: z.string().nullable().describe('pass as cursor for the next (older) page; null on the last page'),
});

export type AuditRow = z.output<typeof AuditRowSchema>;
export type AuditPage = z.output<typeof AuditPageSchema>;
export type AuditQuery = z.output<typeof AuditQuerySchema>;
export type AuditExportQuery = z.output<typeof AuditExportQuerySchema>;
