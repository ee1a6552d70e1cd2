import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { AuditReader } from '../audit/contract';
import { MnemographError } from '../errors';
import type { AgentMemory } from '../memory/agent-memory';
import type { MemoryBundle } from '../retrieval';
import type { OpsReader } from '../ops/ops-reader';
import type { Principal } from '../tenancy/contract';
import type { PgTenantStore } from '../tenancy/pg-tenant-store';
import type { UserDataStore } from '../tenancy/user-data-store';
import type { RouteDef } from './contract';

/** What a handler may use. The facade, the whole-user store, the audit log's reader and the operations report, nothing else. */
export interface RouteContext {
  memory: AgentMemory;
  users: UserDataStore;
  audit: AuditReader;
  /** The operations report (GET /v1/ops). */
  ops: Pick<OpsReader, 'report'>;
}

/**
 * Per request: `external` rewrites internal ids to the ids the caller's tenant knows (every
 * JSON result gets this on the way out; a handler that renders ids into text, such as the
 * prompt block, applies it before rendering).
 */
export interface RequestContext extends RouteContext {
  external: <T>(value: T) => T;
  /** Drops the tenant's registration of the request's users; an erasure runs it before its fence opens. */
  unregister: () => Promise<void>;
  /** Settles once this request's answer has gone out (or the client left): an erasure's fence opens after it. */
  answered: Promise<void>;
  /** The caller's tenant (from its API key): what tenant-wide routes read. */
  tenantId: string;
  /** Who calls: the API key's tenant, key id, role and agent (for routes about the caller or its tenant). */
  principal: Principal;
  /** The tenant registry (the tenant's users, for tenant-wide listings). */
  tenants: Pick<PgTenantStore, 'listUsersAfter'>;
  /** Reports a recall's answer to the metrics (its stage timings, what each technique contributed). */
  recalled: (bundle: MemoryBundle) => void;
}

/**
 * What a streamed route's handler returns: the body, produced as the client reads it, and
 * its media type. The handler should have started its source already (run the query, read
 * a first row), so that a failure to start is an ordinary error answer; a failure midway
 * aborts the response, which a client sees as a truncated body, never as a complete one.
 */
export interface StreamBody {
  contentType: string;
  body: Readable;
}

/** Runs a route's operation: the validated, tenant-namespaced input in, the JSON result (or a streamed body) out. */
type Handler<D extends RouteDef> = (input: z.output<D['input']>, ctx: RequestContext) => Promise<D['response'] extends { kind: 'stream' } ? StreamBody : z.input<D['output']>>;

/** One handler per definition of a route table, under the same key (a missing or extra one is a type error). */
export type Handlers<T> = { [K in keyof T]: T[K] extends RouteDef ? Handler<T[K]> : never };

/** A definition bound to its handler: what the server serves. */
export interface Route extends RouteDef {
  handler: (input: z.output<z.ZodObject>, ctx: RequestContext) => Promise<unknown>;
}

/**
 * Binds every definition of `defs` to the handler of the same key, in the table's order.
 * Throws at startup when a definition has no handler or a handler no definition (the types
 * already refuse both; this catches tables assembled by spreading).
 */
export function bindRoutes<T extends Record<string, RouteDef>>(defs: T, handlers: Handlers<T>): Route[] {
  const bound = handlers as unknown as Record<string, Route['handler'] | undefined>;
  const missing = Object.keys(defs).filter((id) => typeof bound[id] !== 'function');
  const extra = Object.keys(handlers).filter((id) => !Object.hasOwn(defs, id));
  if (missing.length > 0 || extra.length > 0) {
    throw new MnemographError(
      'ROUTE_TABLE_INVALID',
      'system',
      `the route table does not match its handlers (without a handler: ${missing.join(', ') || 'none'}; without a definition: ${extra.join(', ') || 'none'}); add the missing side in src/api`,
      { missing, extra },
    );
  }
  return Object.values(defs).map((def) => ({ ...def, handler: bound[def.id]! }));
}
