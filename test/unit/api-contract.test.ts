import { z } from 'zod';
import { pathParams } from '../../src/api/contract';
import { HttpError, toHttpError } from '../../src/api/errors';
import { forDocs, openApiPath } from '../../src/api/openapi';
import { MnemographError, NotFoundError, StoreUnavailableError, ValidationError } from '../../src/errors';

describe('toHttpError', () => {
  const status = (err: unknown) => toHttpError(err, 'r1').status;
  it('maps typed errors by category and code, never a user error to 500', () => {
    expect(status(new ValidationError('bad'))).toBe(400);
    expect(status(new NotFoundError('fact', 'f1'))).toBe(404);
    expect(status(new MnemographError('SOMETHING_ELSE', 'user', 'x'))).toBe(400);
    expect(status(new StoreUnavailableError('neo4j', 'down'))).toBe(503);
    expect(status(new HttpError(429, 'RATE_LIMITED', 'slow down'))).toBe(429);
  });
  it('hides internal messages of system errors and unknown throws', () => {
    const r = toHttpError(new MnemographError('NEO4J_FAILED', 'system', 'secret query text'), 'r2');
    expect(r).toMatchObject({ status: 500, internal: true, body: { error: { code: 'NEO4J_FAILED', requestId: 'r2' } } });
    expect(r.body.error.message).not.toContain('secret');
    expect(toHttpError(new TypeError('x is undefined'), 'r3')).toMatchObject({ status: 500, body: { error: { code: 'INTERNAL' } } });
  });
  it('maps body-parser errors to 400/413/415', () => {
    expect(toHttpError(Object.assign(new SyntaxError('Unexpected token'), { type: 'entity.parse.failed', status: 400 }), 'r').body.error.code).toBe('INVALID_JSON');
    expect(toHttpError(Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 }), 'r').status).toBe(413);
    expect(toHttpError(Object.assign(new Error('charset'), { type: 'charset.unsupported', status: 415 }), 'r').body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
  it('reports upstream outages with the store, not internal details', () => {
    const r = toHttpError(new StoreUnavailableError('postgres', 'PostgreSQL at ... is unreachable', { pgCode: 'ECONNREFUSED' }), 'r');
    expect(r.body.error.details).toEqual({ store: 'postgres' });
  });
});

describe('route paths and documentation schemas', () => {
  it('reads path parameters and converts them to OpenAPI templates', () => {
    expect(pathParams('/v1/users/:userId/facts/:factId/confirm')).toEqual(['userId', 'factId']);
    expect(openApiPath('/v1/users/:userId/facts/:factId')).toBe('/v1/users/{userId}/facts/{factId}');
  });
  it('replaces recursive schemas for the document and keeps the rest as is', () => {
    type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
    const J: z.ZodType<Json> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(J), z.record(z.string(), J)]));
    const schema = z.object({ a: J.optional(), b: z.array(J).default([]), c: z.string() }).strict();
    const doc = forDocs(schema) as z.ZodObject;
    expect(doc).not.toBe(schema);
    expect(doc.def.catchall).toBeInstanceOf(z.ZodNever);
    expect(doc.safeParse({ a: { x: [1] }, c: 's' }).success).toBe(true);
    const plain = z.object({ c: z.string() });
    expect(forDocs(plain)).toBe(plain);
  });
});
