import * as z from 'zod';
import { AuditExportQuerySchema, AuditPageSchema, AuditQuerySchema } from '../audit/schema';
import { AUDIT_ROLES, defineRoutes } from './contract';

/*
 * The audit log for compliance reviewers (admin and reviewer keys; agent keys get 403):
 * a page of rows newest first, and an export of every matching row, oldest first, streamed.
 * Tenant-wide: rows of the caller's tenant only (the tenant_id column), user ids the tenant's.
 * Zod only, like the other route tables.
 */
export const AUDIT_ROUTE_DEFS = defineRoutes({
  queryAudit: {
    method: 'get',
    path: '/v1/audit',
    summary: "Audit rows of the caller's tenant, newest first, filtered; pass nextCursor as cursor for the next page",
    tag: 'audit',
    input: AuditQuerySchema,
    output: AuditPageSchema,
    status: 200,
    access: 'tenant',
    roles: AUDIT_ROLES,
  },
  exportAudit: {
    method: 'get',
    path: '/v1/audit/export',
    summary: "Every audit row of the caller's tenant matching the filters, oldest first, streamed as CSV (header line first) or JSON lines (one AuditRow each)",
    tag: 'audit',
    input: AuditExportQuerySchema,
    output: z.string().describe('CSV with a header line, or one JSON AuditRow per line'),
    status: 200,
    access: 'tenant',
    roles: AUDIT_ROLES,
    response: { kind: 'stream', contentTypes: ['text/csv', 'application/x-ndjson'] },
  },
});
