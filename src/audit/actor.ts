import { AsyncLocalStorage } from 'node:async_hooks';

/** The surfaces a request or a run comes through. */
export const AUDIT_SURFACES = ['http', 'mcp', 'cli', 'worker'] as const;
export type AuditSurface = (typeof AUDIT_SURFACES)[number];

/**
 * Who acts, as the audit log records it on every row: the tenant and API key (its id, never
 * the key), the agent the key is bound to, the surface, the request id, and for the worker
 * the job and its run (`worker_job_runs.id`). Null where the edge has no such thing.
 */
export interface AuditActor {
  readonly tenantId: string | null;
  readonly keyId: string | null;
  readonly agentId: string | null;
  readonly surface: AuditSurface | null;
  readonly requestId: string | null;
  readonly job: string | null;
  readonly runId: number | null;
}

/** No actor: a library caller outside every edge. */
export const NO_ACTOR: AuditActor = Object.freeze({ tenantId: null, keyId: null, agentId: null, surface: null, requestId: null, job: null, runId: null });

const storage = new AsyncLocalStorage<AuditActor>();
let processActor: AuditActor = NO_ACTOR;

/**
 * Runs `fn` with `actor` (merged over the current one) as the actor of every audit row
 * queued inside it, through every await and callback it starts. Each edge enters it once:
 * the HTTP API after authenticating a request, the MCP endpoint, each worker job run; so a
 * new route, tool or job cannot forget it.
 */
export function withActor<T>(actor: Partial<AuditActor>, fn: () => T): T {
  return storage.run(Object.freeze({ ...currentActor(), ...actor }), fn);
}

/**
 * The actor of a whole process whose every row has the same one (the CLI, MCP over stdio),
 * used where no `withActor` applies. Set once by the process's entry point; a later call
 * (the command's options parsed) refines it.
 */
export function setProcessActor(actor: Partial<AuditActor>): void {
  processActor = Object.freeze({ ...processActor, ...actor });
}

/** The actor of the code running now: the innermost `withActor`, else the process's, else none. */
export function currentActor(): AuditActor {
  return storage.getStore() ?? processActor;
}
