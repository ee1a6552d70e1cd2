import type { z } from 'zod';
import { isStreamed, pathParams, usesQuery, type RouteDef } from '../api/contract';
import { ROUTE_DEFS } from '../api/route-defs';
import { ConnectionError, MnemographApiError, errorFor } from './errors';

export * from './errors';

/*
 * Imports only the API's wire contract (route definitions and zod schemas) and fetch, so it
 * runs in Node, browsers and edge runtimes; test/unit/client-bundle.test.ts keeps it so.
 */

/** The route definitions, keyed by id: `client.call(routes.storeTurn, input)`. */
const routes = ROUTE_DEFS;
type Routes = typeof routes;

export type RouteInput<R extends RouteDef> = z.input<R['input']>;
export type RouteOutput<R extends RouteDef> = z.output<R['output']>;
type In<K extends keyof Routes> = RouteInput<Routes[K]>;
type Out<K extends keyof Routes> = RouteOutput<Routes[K]>;

export interface ClientOptions {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  apiKey: string;
  /** Retries on 429, 503 and refused connections (default 3). */
  retries?: number;
  /** First backoff delay; doubles per retry, with jitter, capped at 10 s (default 200 ms). */
  backoffMs?: number;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
}

type SessionScope = { userId: string; conversationId: string; channel?: string };

/**
 * The typed client of the Mnemograph HTTP API, for any runtime with fetch (Node, browsers,
 * edge runtimes). Methods mirror
 * the AgentMemory facade; each is one call of the route table that also defines the
 * server, so inputs and outputs are typed from the same zod schemas. Retries 429 and 503
 * answers (honouring Retry-After) and refused connections with exponential backoff; other
 * errors throw at once as typed MnemographApiError subclasses.
 */
export class MnemographClient {
  private readonly base: string;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly opts: ClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.retries = opts.retries ?? 3;
    this.backoffMs = opts.backoffMs ?? 200;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  storeTurn = (input: In<'storeTurn'>): Promise<Out<'storeTurn'>> => this.call(routes.storeTurn, input);
  storeTurns = async (turns: In<'storeTurns'>['turns']): Promise<Out<'storeTurns'>['results']> => (await this.call(routes.storeTurns, { turns })).results;
  getConversation = async (userId: string, conversationId: string): Promise<Out<'getConversation'>['turns']> => (await this.call(routes.getConversation, { userId, conversationId })).turns;
  getRecentTurns = async (query: In<'getRecentTurns'>): Promise<Out<'getRecentTurns'>['turns']> => (await this.call(routes.getRecentTurns, query)).turns;
  vectorSearch = async (query: In<'vectorSearch'>): Promise<Out<'vectorSearch'>['results']> => (await this.call(routes.vectorSearch, query)).results;
  userStats = (userId: string): Promise<Out<'userStats'>> => this.call(routes.userStats, { userId });
  /** A user's whole memory as a stream of JSON lines (`mnemograph export`'s format; read it as it arrives). */
  exportUser = async (userId: string): Promise<ReadableStream<Uint8Array>> => {
    const res = await this.stream(routes.exportUser, { userId });
    if (!res.body) throw new ConnectionError(0, 'EMPTY_BODY', 'the export answered without a body');
    return res.body;
  };
  /** The whole export as one string (small users; use exportUser for large ones). */
  exportUserText = async (userId: string): Promise<string> => (await this.stream(routes.exportUser, { userId })).text();
  /** A page of a user's strategies; pass `nextCursor` as `cursor` for the next. */
  listStrategies = (query: In<'listStrategies'>): Promise<Out<'listStrategies'>> => this.call(routes.listStrategies, query);
  forgetUser = (userId: string): Promise<Out<'forgetUser'>> => this.call(routes.forgetUser, { userId });

  // Recall, knowledge, procedural, goals, observations: same names and arguments as AgentMemory.
  remember = (query: In<'remember'>): Promise<Out<'remember'>> => this.call(routes.remember, query);
  /** remember() + formatContext() in one call: the prompt block ('' when nothing is relevant). */
  recallContext = async (query: In<'recallContext'>): Promise<string> => (await this.call(routes.recallContext, query)).context;
  upsertEntity = (input: In<'upsertEntity'>): Promise<Out<'upsertEntity'>> => this.call(routes.upsertEntity, input);
  getEntity = async (userId: string, entityId: string): Promise<Out<'getEntity'> | null> => this.orNull(this.call(routes.getEntity, { userId, entityId }));
  searchEntitiesText = async (query: In<'searchEntitiesText'>): Promise<Out<'searchEntitiesText'>['results']> => (await this.call(routes.searchEntitiesText, query)).results;
  storeFact = (input: In<'storeFact'>): Promise<Out<'storeFact'>> => this.call(routes.storeFact, input);
  searchFactsText = async (query: In<'searchFactsText'>): Promise<Out<'searchFactsText'>['results']> => (await this.call(routes.searchFactsText, query)).results;
  addBlocker = (userId: string, goalId: string, blockerId: string): Promise<Out<'addBlocker'>> => this.call(routes.addBlocker, { userId, goalId, blockerId });
  findEntitiesByName = async (query: In<'findEntitiesByName'>): Promise<Out<'findEntitiesByName'>['entities']> => (await this.call(routes.findEntitiesByName, query)).entities;
  vectorSearchEntities = async (query: In<'vectorSearchEntities'>): Promise<Out<'vectorSearchEntities'>['results']> => (await this.call(routes.vectorSearchEntities, query)).results;
  getEntityGraph = (query: In<'getEntityGraph'>): Promise<Out<'getEntityGraph'>> => this.call(routes.getEntityGraph, query);
  getEntityTimeline = async (query: In<'getEntityTimeline'>): Promise<Out<'getEntityTimeline'>['entries']> => (await this.call(routes.getEntityTimeline, query)).entries;
  deleteEntity = (userId: string, entityId: string): Promise<Out<'deleteEntity'>> => this.call(routes.deleteEntity, { userId, entityId });
  createRelationship = (input: In<'createRelationship'>): Promise<Out<'createRelationship'>> => this.call(routes.createRelationship, input);
  endRelationship = async (input: In<'endRelationship'>): Promise<Out<'endRelationship'>['relationships']> => (await this.call(routes.endRelationship, input)).relationships;
  learnFact = (input: In<'learnFact'>): Promise<Out<'learnFact'>> => this.call(routes.learnFact, input);
  getFact = async (userId: string, factId: string): Promise<Out<'getFact'> | null> => this.orNull(this.call(routes.getFact, { userId, factId }));
  findFacts = async (query: In<'findFacts'>): Promise<Out<'findFacts'>['facts']> => (await this.call(routes.findFacts, query)).facts;
  vectorSearchFacts = async (query: In<'vectorSearchFacts'>): Promise<Out<'vectorSearchFacts'>['results']> => (await this.call(routes.vectorSearchFacts, query)).results;
  correctFact = (input: In<'correctFact'>): Promise<Out<'correctFact'>> => this.call(routes.correctFact, input);
  confirmFact = (userId: string, factId: string): Promise<Out<'confirmFact'>> => this.call(routes.confirmFact, { userId, factId });
  retractFact = (userId: string, factId: string, reason?: string): Promise<Out<'retractFact'>> => this.call(routes.retractFact, { userId, factId, reason });
  promoteToGlobal = (input: In<'promoteToGlobal'>): Promise<Out<'promoteToGlobal'>> => this.call(routes.promoteToGlobal, input);
  recordInvocation = (input: In<'recordInvocation'>): Promise<Out<'recordInvocation'>> => this.call(routes.recordInvocation, input);
  getInvocations = async (userId: string, conversationId: string): Promise<Out<'getInvocations'>['invocations']> => (await this.call(routes.getInvocations, { userId, conversationId })).invocations;
  getToolStats = async (query: In<'getToolStats'>): Promise<Out<'getToolStats'>['tools']> => (await this.call(routes.getToolStats, query)).tools;
  learnStrategy = (input: In<'learnStrategy'>): Promise<Out<'learnStrategy'>> => this.call(routes.learnStrategy, input);
  findStrategies = async (query: In<'findStrategies'>): Promise<Out<'findStrategies'>['results']> => (await this.call(routes.findStrategies, query)).results;
  getStrategy = async (userId: string, strategyId: string): Promise<Out<'getStrategy'> | null> => this.orNull(this.call(routes.getStrategy, { userId, strategyId }));
  reinforceStrategy = (userId: string, strategyId: string, success: boolean): Promise<Out<'reinforceStrategy'>> => this.call(routes.reinforceStrategy, { userId, strategyId, success });
  addGoal = (input: In<'addGoal'>): Promise<Out<'addGoal'>> => this.call(routes.addGoal, input);
  getGoal = async (userId: string, goalId: string): Promise<Out<'getGoal'> | null> => this.orNull(this.call(routes.getGoal, { userId, goalId }));
  completeGoal = (input: In<'completeGoal'>): Promise<Out<'completeGoal'>> => this.call(routes.completeGoal, input);
  listActiveGoals = async (query: In<'listActiveGoals'>): Promise<Out<'listActiveGoals'>['goals']> => (await this.call(routes.listActiveGoals, query)).goals;
  recordObservation = (
    userId: string,
    content: string,
    category: In<'recordObservation'>['category'],
    opts: Omit<In<'recordObservation'>, 'userId' | 'content' | 'category'> = {},
  ): Promise<Out<'recordObservation'>> => this.call(routes.recordObservation, { userId, content, category, ...opts });
  getUserProfile = (userId: string): Promise<Out<'getUserProfile'>> => this.call(routes.getUserProfile, { userId });
  /** Consolidation now, for one user. */
  consolidate = (userId: string): Promise<Out<'consolidateUser'>> => this.call(routes.consolidateUser, { userId });

  // The short-term tier, settings, connection learned info and tier statistics (as AgentMemory's).
  /** The short-term tier, as `AgentMemory.shortTerm`. */
  readonly shortTerm = {
    write: (input: In<'writeShortTerm'>): Promise<Out<'writeShortTerm'>> => this.call(routes.writeShortTerm, input),
    /** The live entry (counting the access), or null when expired, missing or another agent's. */
    get: (input: In<'getShortTerm'>): Promise<Out<'getShortTerm'> | null> => this.orNull(this.call(routes.getShortTerm, input)),
    list: async (input: In<'listShortTerm'>): Promise<Out<'listShortTerm'>['entries']> => (await this.call(routes.listShortTerm, input)).entries,
    refresh: (input: In<'refreshShortTerm'>): Promise<Out<'refreshShortTerm'>> => this.call(routes.refreshShortTerm, input),
    delete: (input: In<'deleteShortTerm'>): Promise<Out<'deleteShortTerm'>> => this.call(routes.deleteShortTerm, input),
  };
  getSettings = (userId: string): Promise<Out<'getSettings'>> => this.call(routes.getSettings, { userId });
  updateSettings = (input: In<'updateSettings'>): Promise<Out<'updateSettings'>> => this.call(routes.updateSettings, input);
  getLearnedInfo = async (userId: string, connectionIds?: string[]): Promise<Out<'listLearnedInfo'>['connections']> => {
    const all = (await this.call(routes.listLearnedInfo, { userId })).connections;
    return connectionIds ? all.filter((c) => connectionIds.includes(c.connectionId)) : all;
  };
  writeLearnedInfo = (input: In<'writeLearnedInfo'>): Promise<Out<'writeLearnedInfo'>> => this.call(routes.writeLearnedInfo, input);
  deleteLearnedInfo = (userId: string, connectionId: string): Promise<Out<'deleteLearnedInfo'>> => this.call(routes.deleteLearnedInfo, { userId, connectionId });
  tierStats = (userId: string): Promise<Out<'tierStats'>> => this.call(routes.tierStats, { userId });
  // The audit log (admin and reviewer keys).
  /** One page of the tenant's audit rows, newest first; pass `nextCursor` as `cursor` for the next. */
  queryAudit = (query: In<'queryAudit'> = {}): Promise<Out<'queryAudit'>> => this.call(routes.queryAudit, query);
  /** Every matching audit row, oldest first, as a stream of CSV or JSON-lines text (read it as it arrives; nothing is buffered). */
  exportAudit = async (query: In<'exportAudit'> = {}): Promise<ReadableStream<Uint8Array>> => {
    const res = await this.stream(routes.exportAudit, query);
    if (!res.body) throw new ConnectionError(0, 'EMPTY_BODY', 'the export answered without a body');
    return res.body;
  };
  /** The whole export as one string (small exports; use exportAudit for large ones). */
  exportAuditText = async (query: In<'exportAudit'> = {}): Promise<string> => (await this.stream(routes.exportAudit, query)).text();

  /** The operations report of the caller's tenant (admin keys): job runs, backlogs, LLM calls and cost, store health. */
  getOperations = (query: In<'getOperations'> = {}): Promise<Out<'getOperations'>> => this.call(routes.getOperations, query);

  /** Working memory of one session, as `AgentMemory.session(scope)`. */
  session(scope: SessionScope) {
    return {
      snapshot: () => this.call(routes.getSession, scope),
      recentTurns: async () => (await this.call(routes.getSession, scope)).recentTurns,
      context: async () => (await this.call(routes.getSession, scope)).context,
      thoughts: async () => (await this.call(routes.getSession, scope)).thoughts,
      activeGoal: async () => (await this.call(routes.getSession, scope)).activeGoal,
      set: async (key: string, value: unknown, ttlSeconds?: number) => {
        await this.call(routes.setContextValue, { ...scope, key, value, ttlSeconds });
      },
      /** The value, or null when unset or expired. */
      get: async (key: string): Promise<unknown> => {
        try {
          return (await this.call(routes.getContextValue, { ...scope, key })).value;
        } catch (err) {
          if (err instanceof MnemographApiError && err.status === 404 && err.code === 'NOT_FOUND' && err.details.what === 'context value') return null;
          throw err;
        }
      },
      delete: async (key: string) => {
        await this.call(routes.deleteContextValue, { ...scope, key });
      },
      pushThought: async (thought: string) => {
        await this.call(routes.pushThought, { ...scope, thought });
      },
      setActiveGoal: async (goal: { goalId: string; description: string }) => {
        await this.call(routes.setActiveGoal, { ...scope, ...goal });
      },
      clear: async () => {
        await this.call(routes.clearSession, scope);
      },
    };
  }

  /** Calls any route of the table (new operations are usable before they get a named method). */
  async call<R extends RouteDef>(route: R, input: RouteInput<R>): Promise<RouteOutput<R>> {
    const text = await (await this.send(route, input)).text();
    return (text ? safeJson(text) : undefined) as RouteOutput<R>;
  }

  /**
   * Calls a streamed route (an export): the successful `Response`, its body not yet read.
   * With no timeout on the transfer itself (an export of months may take minutes); a
   * truncated transfer makes reading the body fail.
   */
  async stream<R extends RouteDef>(route: R, input: RouteInput<R>): Promise<Response> {
    return this.send(route, input, !isStreamed(route));
  }

  /** One request with retries; the `Response` of a 2xx, or the typed error of anything else. */
  private async send(route: RouteDef, input: Record<string, unknown>, timeout = true): Promise<Response> {
    const { url, init } = this.request(route, input);
    if (isStreamed(route)) init.headers = { ...(init.headers as Record<string, string>), accept: route.response.contentTypes.join(', ') };
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { ...init, signal: timeout ? AbortSignal.timeout(this.timeoutMs) : undefined });
      } catch (err) {
        const refused = /ECONNREFUSED|ECONNRESET/.test(String((err as { cause?: { code?: string } }).cause?.code ?? ''));
        if (refused && attempt < this.retries) {
          await sleep(this.delay(attempt));
          continue;
        }
        throw new ConnectionError(0, 'CONNECTION_FAILED', `cannot reach Mnemograph at ${this.base}: ${(err as Error).message}`);
      }
      if ((res.status === 429 || res.status === 503) && attempt < this.retries) {
        const retryAfter = Number(res.headers.get('retry-after'));
        await res.body?.cancel();
        await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 60_000) : this.delay(attempt));
        continue;
      }
      if (res.ok) return res;
      const text = await res.text();
      const body: unknown = text ? safeJson(text) : undefined;
      const e = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown>; requestId?: string } } | undefined)?.error;
      throw errorFor(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? (text.slice(0, 200) || res.statusText), e?.details ?? {}, e?.requestId ?? res.headers.get('x-request-id') ?? undefined);
    }
  }

  /** Reads that the facade answers with null: a 404 NOT_FOUND of the object becomes null. */
  private async orNull<T>(p: Promise<T>): Promise<T | null> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof MnemographApiError && err.status === 404 && err.code === 'NOT_FOUND' && err.details.what !== 'user') return null;
      throw err;
    }
  }

  private request(route: RouteDef, input: Record<string, unknown>): { url: string; init: RequestInit } {
    const rest = { ...input };
    let path = route.path;
    for (const p of pathParams(route.path)) {
      path = path.replace(`:${p}`, encodeURIComponent(paramText(rest[p])));
      delete rest[p];
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.opts.apiKey}`, accept: 'application/json' };
    if (usesQuery(route.method)) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) qs.set(k, paramText(v));
      const q = qs.toString();
      return { url: `${this.base}${path}${q ? `?${q}` : ''}`, init: { method: route.method.toUpperCase(), headers } };
    }
    headers['content-type'] = 'application/json';
    return { url: `${this.base}${path}`, init: { method: route.method.toUpperCase(), headers, body: JSON.stringify(rest) } };
  }

  private delay(attempt: number): number {
    const d = Math.min(this.backoffMs * 2 ** attempt, 10_000);
    return d / 2 + Math.random() * (d / 2);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export { routes };

/** A path or query parameter as text: scalars as they are, anything else as JSON (never "[object Object]"). */
function paramText(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
}
