import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import type { Mnemograph } from '../container';
import { NotFoundError, UserBeingErasedError, ValidationError } from '../errors';
import type { Logger } from '../infra/logger';
import { parseInput } from '../schemas';
import { keyPrincipal, TenantNamespace, type KeyRole } from '../access';
import { PgTenantStore, type FencePass, type Principal, type UserDataStore, type UserWriteFence } from '../tenancy';
import { jsonBody, rehearseJsonBody } from './body';
import { entersFence, isStreamed, pathParams, usesQuery } from './contract';
import { HttpError, toHttpError } from './errors';
import type { Route, RouteContext, StreamBody } from './handlers';
import { checkReadiness } from './health';
import { OpsReader } from '../ops/ops-reader';
import { ApiMetrics } from './metrics';
import { buildOpenApi, type OpenApiDocument } from './openapi';
import { RedisRateLimitStore } from './rate-limit';
import { studioRouter } from './studio';
import { ROUTES } from './routes';
import { VERSION } from '../package-info';
import { withActor } from '../audit/actor';

export interface ApiOptions {
  /** Extra handlers mounted under /v1 after authentication (the MCP endpoint). */
  mount?: (v1: express.Router, helpers: ApiHelpers) => void;
  /** Readiness probe timeout. */
  readyTimeoutMs?: number;
}

/** What mounted endpoints need to act for the caller's tenant. */
export interface ApiHelpers {
  context: RouteContext;
  tenants: PgTenantStore;
  /** The per-user erasure fence a writing endpoint enters (UserWriteFence). */
  fence: UserWriteFence;
  principal(res: Response): Principal;
  authorize(principal: Principal, roles: readonly KeyRole[], what: string): void;
}

export interface ApiApp {
  app: express.Express;
  metrics: ApiMetrics;
  tenants: PgTenantStore;
  users: UserDataStore;
  openapi: OpenApiDocument;
  routes: readonly Route[];
  /** Whether drain() was called: /readyz answers 503 and responses close their connection. */
  readonly draining: boolean;
  /** Starts draining (the server is shutting down); cannot be undone. */
  drain(): void;
  /** Whether warm-up (warm-up.ts) is still under way: /readyz answers 503 with `warming: true`. */
  readonly warming: boolean;
  /** Marks the start (true) or end (false) of warm-up. */
  setWarming(warming: boolean): void;
  /** Warm-up's part of the HTTP stack: the JSON body parser reads one body held in memory (`rehearseJsonBody`). */
  rehearseBody(): Promise<void>;
  close(): void;
}

/** What a 503 for a store outage asks the caller to wait before retrying. */
const STORE_RETRY_AFTER_SECONDS = 2;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/**
 * Builds the HTTP API over a running Mnemograph: request ids, structured request logs,
 * metrics, health and readiness, API-key auth with tenant namespacing, per-key rate
 * limiting, the route table, and one error handler that maps every error to
 * `{error: {code, message, details}}`.
 */
export function createApiApp(m: Mnemograph, opts: ApiOptions = {}): ApiApp {
  const tenants = new PgTenantStore(m.pg.primary, m.config.api.keyCacheSeconds, m.config.api.keyOutageGraceSeconds);
  const metrics = new ApiMetrics(m.metricSources, m.log);
  const openapi = buildOpenApi(ROUTES, VERSION);
  const ops = new OpsReader({
    ...m.opsSources,
    health: async () => (await checkReadiness({ driver: m.driver, database: m.config.neo4j.database, pg: m.pg.primary, redis: m.redis }, opts.readyTimeoutMs)).stores,
  });
  const context: RouteContext = { memory: m.memory, users: m.users, audit: m.auditReader, ops };
  const log = m.log.child({ subsystem: 'api' });
  const limiterStore = new RedisRateLimitStore(m.redis);
  // Invalid keys are counted per client address, so guessing keys is throttled while
  // requests with a valid key never are.
  const authFailures = new RedisRateLimitStore(m.redis, 'authfail:');
  authFailures.init({ windowMs: 60_000 } as Options);

  let draining = false;
  let warming = false;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestContext(log, metrics));
  app.use((_req, res, next) => {
    // While shutting down, a client is told to take its next request elsewhere.
    if (draining) res.setHeader('Connection', 'close');
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const r = await checkReadiness({ driver: m.driver, database: m.config.neo4j.database, pg: m.pg.primary, redis: m.redis }, opts.readyTimeoutMs);
    const ready = r.ready && !draining && !warming;
    res.status(ready ? 200 : 503).json({ ...r, ready, draining, warming });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.use('/studio', studioRouter());

  const v1 = express.Router();
  v1.use(authenticate(tenants, authFailures, m.config.api.authFailuresPerMinute));
  v1.use(
    rateLimit({
      windowMs: 60_000,
      limit: m.config.api.rateLimitPerMinute,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      store: limiterStore,
      keyGenerator: (_req, res) => principalOf(res).keyId,
      handler: (_req, _res, next, options) =>
        next(new HttpError(429, 'RATE_LIMITED', `this API key made more than ${String(options.limit)} requests in a minute; retry after the Retry-After header`, { limit: options.limit })),
    }),
  );
  v1.use(requireJsonBody);
  const parseJson = jsonBody(m.config.api.bodyLimit);
  v1.use(parseJson);
  for (const r of ROUTES) v1[r.method](r.path.replace(/^\/v1/, ''), handle(r, context, tenants, m.fence, metrics));
  opts.mount?.(v1, { context, tenants, fence: m.fence, principal: principalOf, authorize });
  v1.use((req: Request, _res: Response, next: NextFunction) => {
    const allowed = ROUTES.filter((r) => pathRegex(r.path).test(`/v1${req.path}`)).map((r) => r.method.toUpperCase());
    next(
      allowed.length > 0
        ? new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allowed.join(', ')}`, { allowed })
        : new HttpError(404, 'ROUTE_NOT_FOUND', `no route ${req.method} /v1${req.path}; see /v1/openapi.json`),
    );
  });
  app.use('/v1', v1);
  app.use((req: Request, _res: Response, next: NextFunction) => next(new HttpError(404, 'ROUTE_NOT_FOUND', `no route ${req.method} ${req.path}; see /v1/openapi.json`)));
  app.use(errorHandler(log));

  return {
    app,
    metrics,
    tenants,
    users: m.users,
    openapi,
    routes: ROUTES,
    get draining() {
      return draining;
    },
    drain: () => {
      draining = true;
    },
    rehearseBody: () => rehearseJsonBody(parseJson),
    get warming() {
      return warming;
    },
    setWarming: (w) => {
      warming = w;
    },
    close: () => limiterStore.shutdown(),
  };
}

/**
 * Runs one route: validate, enter the users' erasure fence (every call but reads by GET and
 * the erasure itself: 409 while the user is being erased), check tenant ownership,
 * namespace, call the facade acting for the key's principal (so its tenant is in every
 * AccessScope), un-namespace. A claiming route registers its users only once the call
 * succeeded, so a refused write registers nothing. An erasure runs whether or not the user
 * is registered (a write whose registration was lost stays erasable) and answers 404 only
 * when there was nothing to erase.
 */
function handle(r: Route, ctx: RouteContext, tenants: PgTenantStore, fence: UserWriteFence, metrics: ApiMetrics): RequestHandler {
  const params = pathParams(r.path);
  return async (req, res) => {
    const principal = principalOf(res);
    authorize(principal, r.roles, r.id);
    const source: unknown = usesQuery(r.method) ? req.query : req.body;
    if (source === null || typeof source !== 'object' || Array.isArray(source)) {
      throw new ValidationError(`invalid ${r.id} request: the body must be a JSON object`, { issues: [{ path: '(root)', message: 'expected an object' }] });
    }
    const raw: Record<string, unknown> = { ...(source as Record<string, unknown>) };
    for (const p of params) raw[p] = req.params[p];
    const input = parseInput(r.input, raw, `${r.id} request`);

    const ns = new TenantNamespace(principal.tenantId);
    // Tenant-wide routes take user ids as filters: nothing to claim or fence, and an erased user can still be named.
    const userIds = r.access === 'tenant' ? [] : TenantNamespace.userIds(input);
    const internal = ns.mapIn(input);
    const internalIds = r.access === 'tenant' ? [] : TenantNamespace.userIds(internal);
    const pass = entersFence(r) ? await enterFence(fence, ns, internalIds, res.locals.arrivedAt as number) : undefined;
    const t0 = performance.now();
    let outcome = 'error';
    try {
      if (r.access === 'owned') for (const [i, u] of userIds.entries()) await tenants.requireUser(principal.tenantId, u, pass?.epochs[i]);
      if (r.access === 'erase') await requireErasable(tenants, ctx.users, principal.tenantId, userIds, internalIds);
      const memory = ctx.memory.as(keyPrincipal(principal.tenantId, principal.keyId, principal.agentId));
      const unregister = async () => {
        for (const u of userIds) await tenants.unregisterUser(principal.tenantId, u);
      };
      // Only an erasure waits for its own answer (its fence opens after it); other routes skip the listeners.
      const answered =
        r.access === 'erase'
          ? new Promise<void>((done) => {
              res.once('finish', done);
              res.once('close', done);
            })
          : Promise.resolve();
      const result = await r.handler(internal, {
        ...ctx,
        memory,
        external: (v) => ns.mapOut(v),
        unregister,
        answered,
        tenantId: principal.tenantId,
        principal,
        tenants,
        recalled: (bundle) => metrics.observeRecall(bundle),
      });
      if (r.access === 'claim') await tenants.registerUsers(principal.tenantId, userIds, pass?.epochs);
      if (isStreamed(r)) {
        await sendStream(res, r.status, result as StreamBody);
        outcome = 'ok';
        return;
      }
      outcome = 'ok';
      if (r.id === 'getContextValue') metrics.workingLookups.inc({ result: 'hit' });
      res.status(r.status).json(ns.mapOut(result));
    } catch (err) {
      if (r.id === 'getContextValue' && (err as { code?: string }).code === 'NOT_FOUND') metrics.workingLookups.inc({ result: 'miss' });
      throw err;
    } finally {
      await pass?.release();
      metrics.operationDuration.observe({ operation: r.id, outcome }, (performance.now() - t0) / 1000);
    }
  };
}

/** Enters the users' erasure fence; a refusal names the user as the caller knows it. */
async function enterFence(fence: UserWriteFence, ns: TenantNamespace, userIds: string[], arrivedAt: number): Promise<FencePass> {
  try {
    return await fence.enter(userIds, arrivedAt);
  } catch (err) {
    if (err instanceof UserBeingErasedError) throw new UserBeingErasedError(ns.toExternal(String(err.details.userId)));
    throw err;
  }
}

/** 404 for an erasure of a user the tenant never registered and that has nothing stored; otherwise the erasure runs. */
async function requireErasable(tenants: PgTenantStore, users: UserDataStore, tenantId: string, external: string[], internal: string[]): Promise<void> {
  for (const [i, u] of external.entries()) {
    if (await tenants.ownsUser(tenantId, u)) continue;
    const s = await users.stats(internal[i]!);
    const held = Object.keys(s.nodes).length + Object.keys(s.rows).length + s.workingKeys;
    if (held === 0) throw new NotFoundError('user', u);
  }
}

/**
 * Writes a streamed body with back-pressure (the source is read only as fast as the client
 * takes it). If the source fails midway the response is destroyed, so the client sees an
 * aborted transfer (no final chunk), never a body that looks complete; if the client goes
 * away, the source is destroyed, which ends its query.
 */
async function sendStream(res: Response, status: number, out: StreamBody): Promise<void> {
  res.status(status).type(out.contentType);
  res.setHeader('Cache-Control', 'no-store');
  try {
    await pipeline(out.body, res);
  } catch (err) {
    if (!res.headersSent) throw err;
    res.destroy();
    // The client going away is not a failure; anything else is logged by the error handler.
    if ((err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}

/** Request id (caller's X-Request-Id when sane), a child logger, and one log line + metric per request. */
function requestContext(log: Logger, metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = requestId;
    // When the request reached the server: a write that arrived while its user was being erased is refused (UserWriteFence).
    res.locals.arrivedAt = Date.now();
    res.setHeader('X-Request-Id', requestId);
    const t0 = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - t0;
      const routePath = (req.route as { path?: string } | undefined)?.path;
      // Only route templates become labels: raw paths of unmatched requests would grow the series without bound.
      const template = routePath ? `${req.baseUrl}${routePath}` : 'unmatched';
      metrics.httpDuration.observe({ method: req.method, route: template, status: String(res.statusCode) }, ms / 1000);
      const p = res.locals.principal as Principal | undefined;
      log[res.statusCode >= 500 ? 'error' : 'info'](
        { reqId: requestId, method: req.method, route: template, url: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10, tenant: p?.tenantId, keyId: p?.keyId },
        'request',
      );
    });
    next();
  };
}

function authenticate(tenants: PgTenantStore, failures: RedisRateLimitStore, failuresPerMinute: number): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    const key = header?.startsWith('Bearer ') ? header.slice(7).trim() : req.get('x-api-key')?.trim();
    if (!key) throw new HttpError(401, 'UNAUTHENTICATED', 'send an API key as "Authorization: Bearer <key>" (create one with `mnemograph keys create --tenant <id>`)');
    const principal = await tenants.verify(key);
    if (!principal) {
      const { totalHits, resetTime } = await failures.increment(req.ip ?? 'unknown');
      if (totalHits > failuresPerMinute) {
        res.set('Retry-After', String(Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now()) - Date.now()) / 1000))));
        throw new HttpError(429, 'TOO_MANY_AUTH_FAILURES', 'too many requests with an invalid API key from this address; retry after the Retry-After header', { limit: failuresPerMinute });
      }
      throw new HttpError(401, 'INVALID_API_KEY', 'the API key is unknown or revoked');
    }
    res.locals.principal = principal;
    // Every audit row this request queues carries who made it (src/audit/actor.ts): entered
    // here once, before any route or the MCP endpoint runs, so none can leave it out.
    const actor = { tenantId: principal.tenantId, keyId: principal.keyId, agentId: principal.agentId, surface: 'http', requestId: String(res.locals.requestId) } as const;
    withActor(actor, next);
  };
}

const requireJsonBody: RequestHandler = (req, _res, next) => {
  if ((req.method === 'POST' || req.method === 'PUT') && !req.is('application/json') && req.path !== '/mcp') {
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the request body as JSON with Content-Type: application/json');
  }
  next();
};

/** The one role check: a key whose role the route (or MCP endpoint) does not list gets 403, before anything runs. */
export function authorize(principal: Principal, roles: readonly KeyRole[], what: string): void {
  if (!roles.includes(principal.role)) {
    throw new HttpError(403, 'FORBIDDEN', `a ${principal.role} key may not call ${what}; it needs one of the roles ${roles.join(', ')}`, { role: principal.role, allowed: roles });
  }
}

function principalOf(res: Response): Principal {
  const p = res.locals.principal as Principal | undefined;
  if (!p) throw new HttpError(401, 'UNAUTHENTICATED', 'no API key on this request');
  return p;
}

function pathRegex(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+')}/?$`);
}

function errorHandler(log: Logger) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    const requestId = String(res.locals.requestId ?? '');
    if (res.headersSent) {
      // A streamed body failed midway: the response was cut (the client sees a truncated transfer).
      log.error({ reqId: requestId, err }, 'streamed response aborted');
      res.destroy();
      return;
    }
    const { status, body, internal } = toHttpError(err, requestId);
    if (internal) log.error({ reqId: requestId, err }, 'request failed');
    else if (status >= 500) log.warn({ reqId: requestId, code: body.error.code, msg: body.error.message }, 'store unavailable');
    // A store outage passes: the typed client (and any sane one) retries after this many seconds.
    if (status === 503) res.setHeader('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
    if (status === 405) res.setHeader('Allow', ((body.error.details.allowed as string[] | undefined) ?? []).join(', '));
    res.status(status).json(body);
  };
}
