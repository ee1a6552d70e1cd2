import type { z } from 'zod';
import type { AgentMemory } from '../memory/agent-memory';
import type { UserDataStore } from '../tenancy/user-data-store';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/**
 * How a route treats the user ids in its input (after tenant namespacing):
 * - `owned`: the tenant must already own every user id, else 404 (reads, deletes);
 * - `claim`: the tenant takes ownership of new user ids (writes);
 * - `erase`: owned, and released after the handler erased the user.
 */
export type UserAccess = 'owned' | 'claim' | 'erase';

/** What a handler may use. The facade and the whole-user store, nothing else. */
export interface RouteContext {
  memory: AgentMemory;
  users: UserDataStore;
}

/**
 * Per request: `external` rewrites internal ids to the ids the caller's tenant knows (every
 * JSON result gets this on the way out; a handler that renders ids into text, such as the
 * prompt block, applies it before rendering).
 */
export interface RequestContext extends RouteContext {
  external<T>(value: T): T;
}

/**
 * One operation of the API. This single definition drives the express route, request
 * validation, tenant checks, the OpenAPI document and the client's typed method.
 *
 * `input` is one object schema: keys named in `path` (":name") come from the URL, the
 * rest from the query string (get, delete) or the JSON body (post, put). Query-string
 * inputs therefore hold strings only.
 */
export interface Route<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  /** operationId in OpenAPI, method name in the client, label in metrics. */
  id: string;
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
  /** Whether the running facade offers this operation (routes of facade methods not yet built are skipped). */
  available?: (memory: AgentMemory) => boolean;
  handler: (input: z.output<I>, ctx: RequestContext) => Promise<z.input<O>>;
}

/** Identity helper that keeps a route's input and output types for the client. */
export function route<I extends z.ZodObject, O extends z.ZodType>(r: Route<I, O>): Route<I, O> {
  return r;
}

/** The parameter names of an express-style path. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);
}

/** Whether the input travels in the query string (get, delete) rather than a JSON body. */
export function usesQuery(method: HttpMethod): boolean {
  return method === 'get' || method === 'delete';
}
