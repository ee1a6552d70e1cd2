import type { Handlers } from './handlers';
import type { OPS_ROUTE_DEFS } from './ops-route-defs';

/* The operations route bound to the ops reader (src/ops), for the caller's tenant. */
export const OPS_HANDLERS = {
  getOperations: ({ hours }, { ops, tenantId }) => ops.report(tenantId, hours),
} satisfies Handlers<typeof OPS_ROUTE_DEFS>;
