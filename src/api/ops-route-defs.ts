import { OpsQuerySchema, OpsReportSchema } from '../ops/schema';
import { defineRoutes, OPS_ROLES } from './contract';

/*
 * Operations (src/ops), for the tenant's admin keys: the worker's recent job runs, the
 * tenant's embedding backlog, consolidation lag and LLM calls and cost, each store's health.
 * Tenant-wide; per-tenant numbers are the caller's tenant's only. Zod only, like the other tables.
 */
export const OPS_ROUTE_DEFS = defineRoutes({
  getOperations: {
    method: 'get',
    path: '/v1/ops',
    summary: "Operations: recent worker job runs, the tenant's embedding backlog, consolidation lag, LLM calls and cost, each store's health",
    tag: 'operations',
    input: OpsQuerySchema,
    output: OpsReportSchema,
    status: 200,
    access: 'tenant',
    roles: OPS_ROLES,
  },
});
