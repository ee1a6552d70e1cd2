import { createMnemograph, type Mnemograph } from '../../src/container';
import { startServer, type RunningServer } from '../../src/api/server';
import type { ApiOptions } from '../../src/api/app';
import { testConfig, uid } from '../support/stack';

/** A real API server on a random port over the real stores, with helpers to call it. */
export interface Harness {
  m: Mnemograph;
  srv: RunningServer;
  url: string;
  /** Creates a tenant with a fresh key; returns {tenantId, key}. */
  tenant(): Promise<{ tenantId: string; key: string; keyId: string }>;
  call(key: string | undefined, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function openHarness(env: Record<string, string> = {}, opts: ApiOptions = {}): Promise<Harness> {
  const m = await createMnemograph(
    testConfig({ LOG_LEVEL: 'silent', AUDIT_LEVEL: 'writes', API_KEY_CACHE_SECONDS: '0', API_RATE_LIMIT_PER_MINUTE: '100000', API_AUTH_FAILURES_PER_MINUTE: '1000000', ...env }),
  );
  const srv = await startServer(m, { ...opts, port: 0 });
  return {
    m,
    srv,
    url: srv.url,
    async tenant() {
      const tenantId = uid('t').slice(0, 20).toLowerCase();
      const { key, info } = await srv.api.tenants.createKey(tenantId, { name: 'test' });
      return { tenantId, key, keyId: info.id };
    },
    async call(key, method, path, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (key) h.authorization = `Bearer ${key}`;
      let payload: string | undefined;
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
      const res = await fetch(srv.url + path, { method, headers: h, body: payload });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON (metrics) */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await srv.close();
      await m.close();
    },
  };
}

export interface Case {
  method: string;
  path: string;
  body?: unknown;
  status: number;
}

/** A user with one conversation of two turns and some working memory, created through the API. */
export async function seedUser(h: Harness, key: string) {
  const userId = uid('u');
  const conversationId = uid('c');
  for (const content of ['I moved to Lisbon last spring.', 'Nice! How do you like the city?']) {
    const r = await h.call(key, 'POST', '/v1/turns', { userId, conversationId, role: content.startsWith('I') ? 'user' : 'assistant', content });
    expect(r.status).toBe(201);
  }
  const made = async (path: string, body: object, pick: (b: any) => string) => {
    const r = await h.call(key, 'POST', path, { userId, ...body });
    if (r.status !== 201) throw new Error(`seeding ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return pick(r.body);
  };
  const entityId = await made('/v1/entities', { name: 'Lisbon', type: 'place', aliases: ['Lisboa'] }, (b) => b.entity.id);
  const personId = await made('/v1/entities', { name: 'Ana Souza', type: 'person' }, (b) => b.entity.id);
  const factId = await made('/v1/facts', { claim: 'The user lives in Lisbon', aboutEntityIds: [entityId], sourceTurnId: `${conversationId}:0` }, (b) => b.fact.id);
  const strategyId = await made(
    '/v1/strategies',
    { description: 'Search listings then compare prices', toolSequence: ['search_listings', 'compare'], contextPattern: 'find a flat' },
    (b) => b.strategy.id,
  );
  const retractedFactId = await made('/v1/facts', { claim: 'The user owns a sailing boat' }, (b) => b.fact.id);
  const retracted = await h.call(key, 'POST', `/v1/users/${userId}/facts/${retractedFactId}/retract`, { reason: 'sold it' });
  if (retracted.status !== 200) throw new Error(`seeding a retracted fact: ${retracted.status} ${JSON.stringify(retracted.body)}`);
  const goalId = await made('/v1/goals', { description: 'Find a flat in Lisbon', priority: 7 }, (b) => b.goal.id);
  const blockerGoalId = await made('/v1/goals', { description: 'Save for the deposit', priority: 5 }, (b) => b.goal.id);
  await made('/v1/tool-invocations', { conversationId, toolName: 'search_listings', toolInput: { city: 'Lisbon' }, success: true, latencyMs: 40, taskType: 'housing' }, (b) => b.invocation.id);
  const put = async (path: string, body: object) => {
    const r = await h.call(key, 'PUT', path, body);
    if (r.status !== 200) throw new Error(`seeding ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await put(`/v1/users/${userId}/short-term/sess-1/current_task`, { type: 'task_context', value: { task: 'find a flat', city: 'Lisbon' } });
  await put(`/v1/users/${userId}/connections/jira-1/learned-info`, { info: { default_project: 'PROJ' } });
  // A memory pool of the tenant (the admin key owns none; agent `reader` may read it) with an entry about the user and a snapshot.
  const poolId = uid('p');
  const pool = await h.call(key, 'POST', '/v1/pools', { poolId, name: 'housing desk', type: 'team_shared', access: { read: ['reader'], write: [] } });
  if (pool.status !== 201) throw new Error(`seeding a pool: ${pool.status} ${JSON.stringify(pool.body)}`);
  const entryId = await made(`/v1/pools/${poolId}/entries`, { content: 'The deposit for the Lisbon flat is two months of rent.', kind: 'fact' }, (b) => b.id);
  const snap = await h.call(key, 'POST', `/v1/pools/${poolId}/snapshots`, { note: 'seed' });
  if (snap.status !== 201) throw new Error(`seeding a snapshot: ${snap.status} ${JSON.stringify(snap.body)}`);
  const p = `/v1/pools/${poolId}`;
  return {
    userId,
    conversationId,
    s: `/v1/users/${userId}/sessions/${conversationId}`,
    entityId,
    personId,
    factId,
    strategyId,
    goalId,
    blockerGoalId,
    retractedFactId,
    poolId,
    entryId,
    snapshotId: snap.body.id as string,
    p,
    e: `${p}/entries/${entryId}`,
  };
}

export type SeededUser = Awaited<ReturnType<typeof seedUser>>;

/** The happy path of every route. A route added to the table without a case here fails the coverage test. */
export const happy: Record<string, (u: SeededUser) => Case> = {
  storeTurn: (u) => ({ method: 'POST', path: '/v1/turns', body: { userId: u.userId, conversationId: u.conversationId, role: 'user', content: 'And I adopted a cat.' }, status: 201 }),
  storeTurns: (u) => ({
    method: 'POST',
    path: '/v1/turns/batch',
    body: {
      turns: [
        { userId: u.userId, conversationId: uid('c'), role: 'user', content: 'batch one' },
        { userId: u.userId, conversationId: uid('c'), role: 'user', content: 'batch two' },
      ],
    },
    status: 201,
  }),
  getConversation: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/conversations/${u.conversationId}`, status: 200 }),
  getRecentTurns: (u) => ({ method: 'POST', path: '/v1/turns/recent', body: { userId: u.userId, hours: 1 }, status: 200 }),
  vectorSearch: (u) => ({ method: 'POST', path: '/v1/search/vector', body: { userId: u.userId, query: 'where does the user live?', topK: 3 }, status: 200 }),
  getSession: (u) => ({ method: 'GET', path: u.s, status: 200 }),
  setContextValue: (u) => ({ method: 'PUT', path: `${u.s}/context/mood`, body: { value: { level: 'happy' }, ttlSeconds: 60 }, status: 200 }),
  getContextValue: (u) => ({ method: 'GET', path: `${u.s}/context/topic`, status: 200 }),
  deleteContextValue: (u) => ({ method: 'DELETE', path: `${u.s}/context/topic`, status: 200 }),
  pushThought: (u) => ({ method: 'POST', path: `${u.s}/thoughts`, body: { thought: 'the user likes cities by the sea' }, status: 201 }),
  setActiveGoal: (u) => ({ method: 'PUT', path: `${u.s}/active-goal`, body: { goalId: 'g1', description: 'plan a trip' }, status: 200 }),
  clearSession: (u) => ({ method: 'DELETE', path: u.s, status: 200 }),
  userStats: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/stats`, status: 200 }),
  queryAudit: (u) => ({ method: 'GET', path: `/v1/audit?userId=${u.userId}&limit=10`, status: 200 }),
  exportAudit: (u) => ({ method: 'GET', path: `/v1/audit/export?format=csv&userId=${u.userId}`, status: 200 }),
  exportUser: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/export`, status: 200 }),
  forgetUser: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}`, status: 200 }),
  remember: (u) => ({ method: 'POST', path: '/v1/recall', body: { userId: u.userId, query: 'where does the user live?', topK: 5 }, status: 200 }),
  recallContext: (u) => ({ method: 'POST', path: '/v1/recall/context', body: { userId: u.userId, query: 'where does the user live?', tokenBudget: 200 }, status: 200 }),
  upsertEntity: (u) => ({ method: 'POST', path: '/v1/entities', body: { userId: u.userId, name: 'Porto', type: 'place' }, status: 201 }),
  findEntitiesByName: (u) => ({ method: 'POST', path: '/v1/entities/by-name', body: { userId: u.userId, name: 'Lisboa' }, status: 200 }),
  vectorSearchEntities: (u) => ({ method: 'POST', path: '/v1/entities/search', body: { userId: u.userId, query: 'capital of Portugal' }, status: 200 }),
  getEntityGraph: (u) => ({ method: 'POST', path: '/v1/entities/graph', body: { userId: u.userId, entityIds: [u.entityId] }, status: 200 }),
  getEntityTimeline: (u) => ({ method: 'POST', path: '/v1/entities/timeline', body: { userId: u.userId, entityId: u.entityId }, status: 200 }),
  deleteEntity: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}/entities/${u.personId}`, status: 200 }),
  createRelationship: (u) => ({ method: 'POST', path: '/v1/relationships', body: { userId: u.userId, sourceId: u.personId, targetId: u.entityId, type: 'LOCATED_IN' }, status: 201 }),
  endRelationship: (u) => ({ method: 'POST', path: '/v1/relationships/end', body: { userId: u.userId, sourceId: u.personId, targetId: u.entityId, type: 'LOCATED_IN' }, status: 200 }),
  learnFact: (u) => ({ method: 'POST', path: '/v1/facts', body: { userId: u.userId, claim: 'The user has a cat named Tejo' }, status: 201 }),
  getFact: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/facts/${u.factId}`, status: 200 }),
  findFacts: (u) => ({ method: 'POST', path: '/v1/facts/list', body: { userId: u.userId, entityId: u.entityId }, status: 200 }),
  vectorSearchFacts: (u) => ({ method: 'POST', path: '/v1/facts/search', body: { userId: u.userId, query: 'where does the user live' }, status: 200 }),
  correctFact: (u) => ({ method: 'POST', path: '/v1/facts/correct', body: { userId: u.userId, factId: u.factId, claim: 'The user lives in Porto' }, status: 200 }),
  confirmFact: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/facts/${u.factId}/confirm`, body: {}, status: 200 }),
  retractFact: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/facts/${u.factId}/retract`, body: { reason: 'test' }, status: 200 }),
  promoteToGlobal: (u) => ({ method: 'POST', path: '/v1/facts/promote', body: { userId: u.userId, factId: u.factId, reason: 'test', force: true }, status: 200 }),
  recordInvocation: (u) => ({
    method: 'POST',
    path: '/v1/tool-invocations',
    body: { userId: u.userId, conversationId: u.conversationId, toolName: 'compare', success: false, latencyMs: 3 },
    status: 201,
  }),
  getInvocations: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/conversations/${u.conversationId}/tool-invocations`, status: 200 }),
  getToolStats: (u) => ({ method: 'POST', path: '/v1/tools/stats', body: { userId: u.userId }, status: 200 }),
  learnStrategy: (u) => ({ method: 'POST', path: '/v1/strategies', body: { userId: u.userId, description: 'Ask for the budget first', toolSequence: ['ask'] }, status: 201 }),
  findStrategies: (u) => ({ method: 'POST', path: '/v1/strategies/search', body: { userId: u.userId, task: 'find a flat' }, status: 200 }),
  getStrategy: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/strategies/${u.strategyId}`, status: 200 }),
  reinforceStrategy: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/strategies/${u.strategyId}/reinforce`, body: { success: true }, status: 200 }),
  addGoal: (u) => ({ method: 'POST', path: '/v1/goals', body: { userId: u.userId, description: 'Learn Portuguese' }, status: 201 }),
  getGoal: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/goals/${u.goalId}`, status: 200 }),
  completeGoal: (u) => ({ method: 'POST', path: '/v1/goals/complete', body: { userId: u.userId, goalId: u.goalId }, status: 200 }),
  listActiveGoals: (u) => ({ method: 'POST', path: '/v1/goals/active', body: { userId: u.userId }, status: 200 }),
  recordObservation: (u) => ({ method: 'POST', path: '/v1/observations', body: { userId: u.userId, content: 'prefers quiet neighbourhoods', category: 'preference' }, status: 201 }),
  getUserProfile: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/profile`, status: 200 }),
  storeFact: (u) => ({ method: 'POST', path: '/v1/facts/raw', body: { userId: u.userId, claim: 'The user rents a flat', certainty: 'implied' }, status: 201 }),
  searchFactsText: (u) => ({ method: 'POST', path: '/v1/facts/search-text', body: { userId: u.userId, query: 'Lisbon' }, status: 200 }),
  getEntity: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/entities/${u.entityId}`, status: 200 }),
  searchEntitiesText: (u) => ({ method: 'POST', path: '/v1/entities/search-text', body: { userId: u.userId, query: 'Lisboa' }, status: 200 }),
  addBlocker: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/goals/${u.goalId}/blockers`, body: { blockerId: u.blockerGoalId }, status: 200 }),
  writeShortTerm: (u) => ({ method: 'PUT', path: `/v1/users/${u.userId}/short-term/sess-1/reflection`, body: { type: 'reflection', value: 'prices are rising', ttlSeconds: 600 }, status: 200 }),
  getShortTerm: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/short-term/sess-1/current_task`, status: 200 }),
  listShortTerm: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/short-term?sessionId=sess-1&limit=10`, status: 200 }),
  refreshShortTerm: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/short-term/sess-1/current_task/refresh`, body: { ttlSeconds: 120 }, status: 200 }),
  deleteShortTerm: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}/short-term/sess-1/current_task`, status: 200 }),
  getSettings: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/settings`, status: 200 }),
  updateSettings: (u) => ({ method: 'PUT', path: `/v1/users/${u.userId}/settings`, body: { defaultTopK: 7, agents: { planner: { recall: false } } }, status: 200 }),
  listLearnedInfo: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/connections`, status: 200 }),
  getLearnedInfo: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/connections/jira-1/learned-info`, status: 200 }),
  writeLearnedInfo: (u) => ({ method: 'PUT', path: `/v1/users/${u.userId}/connections/jira-1/learned-info`, body: { info: { issue_type: 'Task' } }, status: 200 }),
  deleteLearnedInfo: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}/connections/jira-1/learned-info`, status: 200 }),
  tierStats: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/tiers`, status: 200 }),
  consolidateUser: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/consolidate`, body: {}, status: 200 }),
  searchPools: (u) => ({ method: 'POST', path: '/v1/pools/search', body: { query: 'how much is the deposit?', userId: u.userId }, status: 200 }),
  createPool: () => ({ method: 'POST', path: '/v1/pools', body: { poolId: uid('p'), name: 'team notes', type: 'shared', access: { read: ['reader'] } }, status: 201 }),
  listPools: () => ({ method: 'GET', path: '/v1/pools', status: 200 }),
  getPool: (u) => ({ method: 'GET', path: u.p, status: 200 }),
  deletePool: (u) => ({ method: 'DELETE', path: u.p, status: 200 }),
  grantPoolAccess: (u) => ({ method: 'POST', path: `${u.p}/grants`, body: { agentId: 'planner', level: 'write' }, status: 200 }),
  revokePoolAccess: (u) => ({ method: 'DELETE', path: `${u.p}/grants/reader`, status: 200 }),
  setPoolPublicRead: (u) => ({ method: 'PUT', path: `${u.p}/public-read`, body: { publicRead: true }, status: 200 }),
  poolStats: (u) => ({ method: 'GET', path: `${u.p}/stats`, status: 200 }),
  addPoolEntry: (u) => ({
    method: 'POST',
    path: `${u.p}/entries`,
    body: { content: 'The user prefers Alfama.', kind: 'observation', userId: u.userId, provenance: { turnId: `${u.conversationId}:0` } },
    status: 201,
  }),
  listPoolEntries: (u) => ({ method: 'POST', path: `${u.p}/entries/list`, body: { userId: u.userId }, status: 200 }),
  getPoolEntry: (u) => ({ method: 'GET', path: u.e, status: 200 }),
  updatePoolEntry: (u) => ({ method: 'PUT', path: u.e, body: { content: 'The deposit for the Lisbon flat is three months of rent.' }, status: 200 }),
  deletePoolEntry: (u) => ({ method: 'DELETE', path: u.e, status: 200 }),
  poolEntryHistory: (u) => ({ method: 'GET', path: `${u.e}/versions`, status: 200 }),
  restorePoolEntryVersion: (u) => ({ method: 'POST', path: `${u.e}/restore`, body: { version: 1 }, status: 200 }),
  adjustPoolEntryImportance: (u) => ({ method: 'POST', path: `${u.e}/importance`, body: { direction: 'boost', amount: 0.2 }, status: 200 }),
  takePoolSnapshot: (u) => ({ method: 'POST', path: `${u.p}/snapshots`, body: { note: 'before the move' }, status: 201 }),
  listPoolSnapshots: (u) => ({ method: 'GET', path: `${u.p}/snapshots`, status: 200 }),
  restorePoolSnapshot: (u) => ({ method: 'POST', path: `${u.p}/snapshots/${u.snapshotId}/restore`, body: {}, status: 200 }),
  getOperations: () => ({ method: 'GET', path: '/v1/ops?hours=24', status: 200 }),
  whoami: () => ({ method: 'GET', path: '/v1/whoami', status: 200 }),
  listUsers: () => ({ method: 'GET', path: '/v1/users?limit=20', status: 200 }),
  listConversations: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/conversations?limit=10`, status: 200 }),
  listTurns: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/conversations/${u.conversationId}/turns?afterIndex=0&limit=10`, status: 200 }),
  deleteConversation: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}/conversations/${u.conversationId}`, status: 200 }),
  deleteTurn: (u) => ({ method: 'DELETE', path: `/v1/users/${u.userId}/conversations/${u.conversationId}/turns/1?dryRun=true`, status: 200 }),
  listEntities: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/entities?sort=mentions&q=lis`, status: 200 }),
  listFacts: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/facts?status=all&limit=5`, status: 200 }),
  listStrategies: (u) => ({ method: 'GET', path: `/v1/users/${u.userId}/strategies?q=listings&sort=success&limit=10`, status: 200 }),
  restoreFact: (u) => ({ method: 'POST', path: `/v1/users/${u.userId}/facts/${u.retractedFactId}/restore`, body: { reason: 'bought it back' }, status: 200 }),
  mergeEntities: (u) => ({ method: 'POST', path: '/v1/entities/merge', body: { userId: u.userId, keepId: u.entityId, mergeId: u.personId }, status: 200 }),
};
