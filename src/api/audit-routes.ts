import { TenantNamespace } from '../access';
import { EXPORT_CONTENT_TYPES, exportStream, mapRows, primed, withExternalAffected } from '../audit/export';
import type { AUDIT_ROUTE_DEFS } from './audit-route-defs';
import type { Handlers } from './handlers';

/** Rows a page holds when the caller names no limit. */
const DEFAULT_PAGE = 100;

/*
 * The audit routes' handlers: the reader scoped to the caller's tenant. User and conversation
 * ids come back in the tenant's terms through the usual mapping (the JSON result's `external`,
 * applied by the API; per row for the export); affected ids (turn ids carry the namespace of
 * their conversation) are mapped here, since no generic rule knows them.
 */
export const AUDIT_HANDLERS = {
  queryAudit: async ({ cursor, limit, ...filter }, { audit, tenantId }) => {
    const ns = new TenantNamespace(tenantId);
    const page = await audit.page({ tenantId }, filter, { cursor, limit: limit ?? DEFAULT_PAGE });
    return { rows: page.rows.map((r) => withExternalAffected(ns, r)), nextCursor: page.nextCursor };
  },
  exportAudit: async ({ format, ...filter }, { audit, tenantId, external }) => {
    const ns = new TenantNamespace(tenantId);
    const rows = await primed(mapRows(audit.stream({ tenantId }, filter), (r) => external(withExternalAffected(ns, r))));
    return { contentType: EXPORT_CONTENT_TYPES[format], body: exportStream(rows, format) };
  },
} satisfies Handlers<typeof AUDIT_ROUTE_DEFS>;
