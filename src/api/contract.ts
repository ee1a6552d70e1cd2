import type { z } from 'zod';
import type { KeyRole } from '../access/roles';

export { AUDIT_ROLES, ERASE_ROLES, MEMORY_ROLES, OPS_ROLES, REVIEW_ROLES } from '../access/roles';

/*
 * The wire contract of the HTTP API: what a route is, without its handler. Zod only, so
 * the client (`mnemograph/client`) can bundle it for a browser; the server binds each
 * definition to the facade in `routes.ts`.
 */

type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/**
 * How a route treats the user ids in its input (after tenant namespacing):
 * - `owned`: the tenant must already own every user id, else 404 (reads, deletes);
 * - `claim`: the tenant takes ownership of new user ids (writes);
 * - `erase`: owned, and released after the handler erased the user;
 * - `tenant`: tenant-wide, no user is required or claimed: it answers about the caller's
 *   tenant as a whole (its users, the key itself, its audit log); a user id in the input is a
 *   filter (namespaced like any other), so a user the tenant erased can still be named.
 */
type UserAccess = 'owned' | 'claim' | 'erase' | 'tenant';

/**
 * What a route answers: `json` (the default), the `output` schema as a JSON body; or
 * `stream`, a text body in one of `contentTypes` written as it is produced (an export of any
 * size in bounded memory), which `output` describes for the OpenAPI document (a string).
 */
export type RouteResponse = { readonly kind: 'json' } | { readonly kind: 'stream'; readonly contentTypes: readonly string[] };

/**
 * One operation of the API. This single definition drives the express route, request
 * validation, tenant checks, the OpenAPI document and the client's typed method.
 *
 * `input` is one object schema: keys named in `path` (":name") come from the URL, the
 * rest from the query string (get, delete) or the JSON body (post, put). Query-string
 * inputs therefore hold strings only.
 */
export interface RouteDef<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType, Id extends string = string> {
  /** operationId in OpenAPI, method name in the client, label in metrics: the route's key in its table. */
  id: Id;
  method: HttpMethod;
  /** Express-style path, e.g. /v1/users/:userId/stats. */
  path: string;
  summary: string;
  tag: string;
  input: I;
  output: O;
  /** Success status; 201 for creations. */
  status: 200 | 201;
  access: UserAccess;
  /** The key roles that may call the route; checked once, before validation, for every route (and MCP tool). */
  roles: readonly KeyRole[];
  /** How the result travels; JSON when absent. */
  response?: RouteResponse;
}

/** Whether a route streams its body rather than answering JSON. */
export function isStreamed(def: Pick<RouteDef, 'response'>): def is { response: Extract<RouteResponse, { kind: 'stream' }> } {
  return def.response?.kind === 'stream';
}

/** A route table: definitions keyed by id, each typed with its own input and output schemas. */
type RouteDefs<T> = { readonly [K in keyof T]: T[K] & { id: K & string } };

/**
 * Builds a route table from definitions keyed by id (the key becomes `id`), keeping each
 * one's input and output types for the server's handlers and the client's methods. Key
 * order is documentation order.
 */
export function defineRoutes<T extends Record<string, Omit<RouteDef, 'id'>>>(defs: T): RouteDefs<T> {
  return Object.fromEntries(Object.entries(defs).map(([id, def]) => [id, { id, ...def }])) as RouteDefs<T>;
}

/** The parameter names of an express-style path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
}

/**
 * Whether a call of the route enters the erasure fence of the users it names (UserWriteFence):
 * every call but reads by GET, the erasure itself and tenant-wide routes. Such a call naming a
 * user being erased is refused with 409 USER_BEING_ERASED (documented in the OpenAPI).
 */
export function entersFence(def: Pick<RouteDef, 'method' | 'access'>): boolean {
  return def.method !== 'get' && def.access !== 'erase' && def.access !== 'tenant';
}

/** Whether the input travels in the query string (get, delete) rather than a JSON body. */
export function usesQuery(method: HttpMethod): boolean {
  return method === 'get' || method === 'delete';
}
