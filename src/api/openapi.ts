import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { entersFence, isStreamed, pathParams, usesQuery, type RouteDef } from './contract';
import { ErrorSchema } from './schemas';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });

/**
 * The schema as documented: recursive `z.lazy` values (free-form JSON such as tool inputs)
 * become "any JSON value", which the generator can express; validation still uses the
 * original schema. Walks objects, arrays and optional / default / nullable wrappers.
 */
export function forDocs(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodLazy) return z.unknown().describe('any JSON value');
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const mapped = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, forDocs(v)]));
    if (Object.entries(mapped).every(([k, v]) => v === shape[k])) return schema;
    const copy = z.object(mapped);
    return schema.def.catchall instanceof z.ZodNever ? copy.strict() : copy;
  }
  if (schema instanceof z.ZodOptional) return mapInner(schema, schema.unwrap() as z.ZodType, (t) => t.optional());
  if (schema instanceof z.ZodNullable) return mapInner(schema, schema.unwrap() as z.ZodType, (t) => t.nullable());
  if (schema instanceof z.ZodDefault) return mapInner(schema, schema.def.innerType as z.ZodType, (t) => t.default(schema.def.defaultValue as never));
  if (schema instanceof z.ZodArray) return mapInner(schema, schema.element as z.ZodType, (t) => z.array(t));
  return schema;
}

function mapInner(outer: z.ZodType, inner: z.ZodType, wrap: (t: z.ZodType) => z.ZodType): z.ZodType {
  const mapped = forDocs(inner);
  return mapped === inner ? outer : wrap(mapped);
}

/** The success body: JSON of the output schema, or for a streamed route each of its media types. */
function successContent(r: RouteDef): Record<string, { schema: z.ZodType }> {
  if (!isStreamed(r)) return { 'application/json': { schema: forDocs(r.output) } };
  return Object.fromEntries(r.response.contentTypes.map((t) => [t, { schema: r.output }]));
}

/** Whether an input schema has a `userId` anywhere (a batch's turns included): the users a call names. */
export function namesUsers(schema: z.ZodType): boolean {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = schema.shape;
    return Object.entries(shape).some(([k, v]) => k === 'userId' || namesUsers(v));
  }
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return namesUsers(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodDefault) return namesUsers(schema.def.innerType as z.ZodType);
  if (schema instanceof z.ZodArray) return namesUsers(schema.element as z.ZodType);
  if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).some(namesUsers);
  if (schema instanceof z.ZodPipe) return namesUsers(schema.in as z.ZodType);
  return false;
}

/** Express ":name" to OpenAPI "{name}". */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

/**
 * The OpenAPI 3 document, generated from the route table's zod schemas (the same ones
 * that validate requests), plus the unauthenticated operational endpoints.
 */
export function buildOpenApi(routes: readonly RouteDef[], version: string): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'an API key from `mnemograph keys create --tenant <id>` (also accepted in the X-API-Key header)',
  });

  for (const r of routes) {
    const params = pathParams(r.path);
    const input = forDocs(r.input) as z.ZodObject;
    const shape = input.shape as Record<string, z.ZodType>;
    const rest = Object.fromEntries(Object.entries(shape).filter(([k]) => !params.includes(k)));
    const request: NonNullable<Parameters<typeof registry.registerPath>[0]['request']> = {};
    if (params.length > 0) request.params = z.object(Object.fromEntries(params.map((p) => [p, shape[p]!])));
    if (usesQuery(r.method)) {
      if (Object.keys(rest).length > 0) request.query = z.object(rest);
    } else {
      request.body = { required: true, content: { 'application/json': { schema: params.length > 0 ? z.object(rest).strict() : input } } };
    }
    registry.registerPath({
      operationId: r.id,
      method: r.method,
      path: openApiPath(r.path),
      summary: r.summary,
      description: `Key roles: ${r.roles.join(', ')}.`,
      tags: [r.tag],
      security: [{ [bearer.name]: [] }],
      request,
      responses: {
        [r.status]: { description: isStreamed(r) ? 'success: the body is streamed as it is produced' : 'success', content: successContent(r) },
        400: errorResponse('invalid request (code VALIDATION_FAILED, INVALID_JSON, ...); nothing was written'),
        401: errorResponse('missing, unknown or revoked API key'),
        403: errorResponse(`the key's role may not call this route (allowed: ${r.roles.join(', ')})`),
        404: errorResponse('the user, or the object named in the path, does not exist for this tenant'),
        ...(entersFence(r) && namesUsers(r.input)
          ? { 409: errorResponse('USER_BEING_ERASED: a user this call names is being erased (DELETE /v1/users/{userId} is running); nothing was written. Retry once the erasure has finished') }
          : {}),
        413: errorResponse('request body larger than API_BODY_LIMIT'),
        429: errorResponse('rate limit of this API key exceeded; retry after the Retry-After header'),
        503: errorResponse('a store is unavailable; retry later'),
      },
    });
  }

  const StoreCheck = z.object({ up: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
  registry.registerPath({
    operationId: 'healthz',
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process is up',
    tags: ['operations'],
    responses: { 200: { description: 'up', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } } },
  });
  const Readiness = z.object({
    ready: z.boolean(),
    draining: z.boolean(),
    warming: z.boolean(),
    stores: z.object({ neo4j: StoreCheck, postgres: StoreCheck, redis: StoreCheck.extend({ degraded: z.boolean().optional() }) }),
  });
  registry.registerPath({
    operationId: 'readyz',
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: each store answers, with its latency, and the server is not shutting down',
    tags: ['operations'],
    responses: {
      200: { description: 'Neo4j and PostgreSQL answer (Redis may be down: `degraded`, served by in-process fallbacks)', content: { 'application/json': { schema: Readiness } } },
      503: { description: 'a store does not answer, or the server is draining (shutting down)', content: { 'application/json': { schema: Readiness } } },
    },
  });
  registry.registerPath({
    operationId: 'metrics',
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    responses: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } } },
  });
  registry.registerPath({
    operationId: 'openapi',
    method: 'get',
    path: '/v1/openapi.json',
    summary: 'This document',
    tags: ['operations'],
    responses: { 200: { description: 'OpenAPI 3 document', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
  });

  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Mnemograph',
      version,
      description: "Long-term memory for AI agents. Every /v1 route needs an API key; a key belongs to a tenant and sees only that tenant's users.",
    },
    servers: [{ url: '/' }],
  });
  // A path parameter is always required (OpenAPI 3.1); the generator leaves coerced ones (a turn index) optional.
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item as Record<string, { parameters?: Array<{ in?: string; required?: boolean }> }>)) {
      for (const p of op.parameters ?? []) if (p.in === 'path') p.required = true;
    }
  }
  return doc;
}
