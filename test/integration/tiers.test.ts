import { keyPrincipal, userScope } from '../../src/access';
import { PgAuditTrail } from '../../src/audit';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { formatContext } from '../../src/retrieval';
import { emptyErasureReport, RedisUserKeys, type ExportLine } from '../../src/tenancy';
import type { JobContext } from '../../src/worker';
import { testConfig, uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * The memory tiers on the real stack: the short-term tier on a fake clock (expiry, access
 * counts, promotion with provenance, cleanup, durability past Redis), agents seeing only
 * their own entries over HTTP, connection-scoped facts and learned info, per-user settings
 * honoured by recall and the worker, and the whole-user operations covering all of it.
 */

/** A clock the test moves by hand. */
class FakeClock {
  constructor(private t: number) {}
  now = () => new Date(this.t);
  advance(seconds: number) {
    this.t += seconds * 1000;
  }
}

const T0 = Date.parse('2026-03-01T09:00:00.000Z');
let clock: FakeClock;
let m: Mnemograph;
beforeAll(async () => {
  clock = new FakeClock(T0);
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'writes', EMBEDDING_MODE: 'inline', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false, clock });
});
afterAll(async () => m.close());

function jobContext(userIds: string[]): JobContext {
  return { clock, log: m.log, signal: new AbortController().signal, workerId: 'test', userIds, pause: () => Promise.resolve() };
}

describe('short-term tier (fake clock)', () => {
  it('expires entries, counts reads, promotes an entry read 3 times to a fact with its provenance, and deletes expired entries', async () => {
    const userId = uid('u');
    const planner = m.memory.as(keyPrincipal(null, null, 'planner'));
    const w = await planner.shortTerm.write({ userId, sessionId: 'sess-1', key: 'budget', type: 'task_context', value: 'The budget for the flat is 1200 euros a month' });
    expect(w).toMatchObject({ created: true, entry: { agentId: 'planner', ttlSeconds: 3600, accessCount: 0, expiresAt: new Date(T0 + 3_600_000).toISOString() } });
    await planner.shortTerm.write({ userId, sessionId: 'sess-1', key: 'scratch', type: 'reflection', value: { tried: ['idealista'] }, ttlSeconds: 60 });

    clock.advance(30);
    expect((await planner.shortTerm.get({ userId, sessionId: 'sess-1', key: 'scratch' })).accessCount).toBe(1);
    clock.advance(31); // scratch expired at T0 + 60 s
    await expect(planner.shortTerm.get({ userId, sessionId: 'sess-1', key: 'scratch' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(planner.shortTerm.refresh({ userId, sessionId: 'sess-1', key: 'scratch' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await planner.shortTerm.list({ userId })).map((e) => e.key)).toEqual(['budget']);

    for (let i = 1; i <= 3; i++) {
      const e = await planner.shortTerm.get({ userId, sessionId: 'sess-1', key: 'budget' });
      expect(e.accessCount).toBe(i);
      expect(e.lastAccessedAt).toBe(clock.now().toISOString());
    }
    expect((await planner.shortTerm.list({ userId, sessionId: 'sess-1' }))[0]!.accessCount).toBe(3); // listing is not a read
    clock.advance(1800);
    const refreshed = await planner.shortTerm.refresh({ userId, sessionId: 'sess-1', key: 'budget' });
    expect(refreshed.expiresAt).toBe(new Date(clock.now().getTime() + 3_600_000).toISOString());
    // Rewriting a live entry keeps its count.
    expect((await planner.shortTerm.write({ userId, sessionId: 'sess-1', key: 'budget', type: 'task_context', value: 'The budget for the flat is 1200 euros a month' })).entry.accessCount).toBe(3);
    await planner.shortTerm.write({ userId, sessionId: 'sess-2', key: 'once', type: 'observation', value: 'read only once' });
    await planner.shortTerm.get({ userId, sessionId: 'sess-2', key: 'once' });

    // Two hours later both are expired: the often-read one is promoted first, then both deleted.
    clock.advance(7200);
    const stats = await m.jobs.short_term(jobContext([userId]));
    expect(stats).toMatchObject({ promoted: 1, promotionsFailed: 0, expiredDeleted: 3 });
    // The expiry is one chained audit row of what went, by kind and count.
    const record = await m.pg.primary.query("SELECT metadata, chain_seq FROM memory_audit_log WHERE operation = 'expire_short_term' ORDER BY id DESC LIMIT 1");
    expect(record.rows).toEqual([{ metadata: { deleted: { shortTermEntries: 3 } }, chain_seq: expect.any(String) }]);
    const fact = await m.memory.semantic.getFact(userId, `stm-${w.entry.id}`);
    expect(fact).toMatchObject({
      claim: 'budget: The budget for the flat is 1200 euros a month',
      source: 'short_term:planner',
      status: 'active',
      properties: { short_term_entry_id: w.entry.id, session_id: 'sess-1', agent_id: 'planner', memory_type: 'task_context', memory_key: 'budget', access_count: 3 },
    });
    expect(await m.memory.tierStats(userId)).toMatchObject({ shortTerm: { entries: 0, expired: 0 }, longTerm: { semantic: 1 } });
    // The promoted fact is long-term memory: recall finds it.
    const recalled = await m.memory.remember({ userId, query: 'what is the budget for the flat?', includeEpisodic: false });
    expect(recalled.facts.map((f) => f.id)).toContain(fact!.id);
    // A rerun finds nothing left to do.
    expect(await m.jobs.short_term(jobContext([userId]))).toMatchObject({ promoted: 0, expiredDeleted: 0 });
  }, 60_000);

  it('a promotion threshold is configurable, and an entry read fewer times is not promoted', async () => {
    const userId = uid('u');
    const s = m.memory.shortTerm;
    await s.write({ userId, sessionId: 's', key: 'k', type: 'tool_result', value: 'twice read' });
    await s.get({ userId, sessionId: 's', key: 'k' });
    await s.get({ userId, sessionId: 's', key: 'k' });
    expect(await m.jobs.short_term(jobContext([userId]))).toMatchObject({ promoted: 0, expiredDeleted: 0 });
    const { shortTermJob } = await import('../../src/worker/jobs/short-term');
    const twice = shortTermJob({ store: m.shortTerm, knowledge: m.knowledge, trail: new PgAuditTrail(m.pg.primary), minAccess: 2, batchSize: 10 });
    expect(await twice(jobContext([userId]))).toMatchObject({ promoted: 1 });
    expect((await s.list({ userId }))[0]!.promotedFactId).toMatch(/^stm-/);
  }, 30_000);

  it('survives the loss of the user’s Redis keys (working memory does not)', async () => {
    const userId = uid('u');
    const session = m.memory.session({ userId, conversationId: uid('c') });
    await session.set('mood', 'curious');
    await m.memory.shortTerm.write({ userId, sessionId: 'sess', key: 'plan', type: 'task_context', value: { step: 2 } });
    expect((await m.memory.tierStats(userId)).working.keys).toBeGreaterThan(0);
    await new RedisUserKeys(m.redis, m.working).erase(userId, emptyErasureReport(userId));
    expect((await session.get('mood')) ?? null).toBeNull();
    expect((await m.memory.shortTerm.get({ userId, sessionId: 'sess', key: 'plan' })).value).toEqual({ step: 2 });
    expect(await m.memory.tierStats(userId)).toMatchObject({ working: { keys: 0 }, shortTerm: { entries: 1, sessions: 1 }, shared: { pools: expect.any(Number), entries: expect.any(Number) } });
  });

  it('refuses bad input with the field named and writes nothing', async () => {
    const userId = uid('u');
    const s = m.memory.shortTerm;
    await expect(s.write({ userId, sessionId: 's', key: 'k', type: 'gossip' as never, value: 1 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(s.write({ userId, sessionId: 's', key: 'k', type: 'reflection', value: undefined })).rejects.toThrow(/value/);
    await expect(s.write({ userId, sessionId: 's', key: 'a/b', type: 'reflection', value: 1 })).rejects.toThrow(/key/);
    await expect(s.write({ userId, sessionId: 's', key: 'k', type: 'reflection', value: 1, ttlSeconds: 0 })).rejects.toThrow(/ttlSeconds/);
    expect(await s.list({ userId })).toEqual([]);
  });
});

describe('short-term tier over HTTP with agent-bound keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => h.close());

  it('an agent sees only its own entries, an admin key the tenant’s, another tenant nothing', async () => {
    const A = await h.tenant();
    const B = await h.tenant();
    const planner = (await h.srv.api.tenants.createKey(A.tenantId, { agentId: 'planner' })).key;
    const critic = (await h.srv.api.tenants.createKey(A.tenantId, { agentId: 'critic' })).key;
    const userId = uid('u');
    const entry = `/v1/users/${userId}/short-term/sess-1/draft`;

    const w = await h.call(planner, 'PUT', entry, { type: 'task_context', value: { plan: 'visit Alfama' } });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ created: true, entry: { agentId: 'planner', userId, sessionId: 'sess-1', key: 'draft' } });

    // The other agent: not found, not listed, cannot refresh or delete it, sees none in stats.
    expect((await h.call(critic, 'GET', entry)).status).toBe(404);
    expect((await h.call(critic, 'POST', `${entry}/refresh`, {})).status).toBe(404);
    expect((await h.call(critic, 'DELETE', entry)).status).toBe(404);
    expect((await h.call(critic, 'GET', `/v1/users/${userId}/short-term`)).body.entries).toEqual([]);
    expect((await h.call(critic, 'GET', `/v1/users/${userId}/tiers`)).body.shortTerm.entries).toBe(0);
    // Its own entry of the same session and key is a separate one.
    expect((await h.call(critic, 'PUT', entry, { type: 'reflection', value: 'too touristy' })).body).toMatchObject({ created: true, entry: { agentId: 'critic' } });
    expect((await h.call(planner, 'GET', entry)).body).toMatchObject({ agentId: 'planner', value: { plan: 'visit Alfama' }, accessCount: 1 });
    expect((await h.call(critic, 'GET', entry)).body).toMatchObject({ agentId: 'critic', value: 'too touristy' });

    // The admin key sees both agents' entries.
    const all = await h.call(A.key, 'GET', `/v1/users/${userId}/short-term`);
    expect(all.body.entries.map((e: { agentId: string }) => e.agentId).sort()).toEqual(['critic', 'planner']);
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/tiers`)).body.shortTerm).toMatchObject({ entries: 2, sessions: 1 });

    // Another tenant: the user is not its own (404), and its namesake holds nothing of A's.
    expect((await h.call(B.key, 'GET', entry)).status).toBe(404);
    expect((await h.call(B.key, 'GET', `/v1/users/${userId}/short-term`)).status).toBe(404);
    expect((await h.call(B.key, 'PUT', `/v1/users/${userId}/short-term/sess-9/x`, { type: 'reflection', value: 'B' })).status).toBe(200);
    expect((await h.call(B.key, 'GET', `/v1/users/${userId}/short-term`)).body.entries.map((e: { value: string }) => e.value)).toEqual(['B']);
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/short-term`)).body.entries).toHaveLength(2);

    // The writes are audited with the acting agent.
    await h.m.audit.flush();
    const rows = await h.m.pg.primary.query("SELECT operation, metadata->>'agentId' AS agent FROM memory_audit_log WHERE user_id = $1 AND memory_type = 'short_term' ORDER BY timestamp", [
      `${A.tenantId}.${userId}`,
    ]);
    expect(rows.rows).toEqual([
      { operation: 'short_term_write', agent: 'planner' },
      { operation: 'short_term_write', agent: 'critic' },
    ]);
  }, 60_000);

  it('settings: readable by reviewers, changed by admin keys only; validated', async () => {
    const A = await h.tenant();
    const agent = (await h.srv.api.tenants.createKey(A.tenantId, { agentId: 'planner' })).key;
    const reviewer = (await h.srv.api.tenants.createKey(A.tenantId, { role: 'reviewer' })).key;
    const userId = uid('u');
    expect((await h.call(A.key, 'PUT', `/v1/users/${userId}/settings`, { defaultTopK: 3, agents: { planner: { recall: false } } })).body).toMatchObject({
      memoryEnabled: true,
      defaultTopK: 3,
      agents: { planner: { recall: false } },
    });
    expect((await h.call(reviewer, 'GET', `/v1/users/${userId}/settings`)).body.defaultTopK).toBe(3);
    expect((await h.call(agent, 'PUT', `/v1/users/${userId}/settings`, { memoryEnabled: false })).status).toBe(403);
    const bad = await h.call(A.key, 'PUT', `/v1/users/${userId}/settings`, { defaultTopK: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('defaultTopK');
    // The agent's recall is skipped, and says why.
    const r = await h.call(agent, 'POST', '/v1/recall', { userId, query: 'anything' });
    expect(r.status).toBe(200);
    expect(r.body.skipped).toMatch(/recall is switched off for agent planner/);
    // null removes an override; other keys are left as they were.
    expect((await h.call(A.key, 'PUT', `/v1/users/${userId}/settings`, { agents: { planner: null } })).body).toMatchObject({ defaultTopK: 3, agents: {} });
  });
});

describe('connection-scoped memory', () => {
  it('a fact of an inactive connection never comes back (full-text, vector, graph, recall), an active one does', async () => {
    const userId = uid('u');
    const jira = await m.memory.learnFact({ userId, claim: 'The default Jira project for tickets is PROJ', connectionId: 'jira-1' });
    const gmail = await m.memory.learnFact({ userId, claim: 'The default project for email filters is INBOX-TRIAGE', connectionId: 'gmail-1' });
    const plain = await m.memory.learnFact({ userId, claim: 'The user prefers the project names short' });
    expect(jira.fact.connectionId).toBe('jira-1');
    expect(plain.fact.connectionId).toBeNull();
    const ids = (xs: Array<{ fact: { id: string } }>) => xs.map((x) => x.fact.id).sort();
    const expected = [jira.fact.id, plain.fact.id].sort();

    // Each path alone, with jira active: gmail's fact is filtered out, both others come back.
    const text = await m.memory.semantic.searchFactsText({ userId, query: 'default project', activeConnections: ['jira-1'], topK: 10 });
    expect(ids(text)).toEqual(expected);
    const vector = await m.memory.vectorSearchFacts({ userId, query: 'which default project?', activeConnections: ['jira-1'], topK: 10 });
    expect(ids(vector).filter((id) => id === gmail.fact.id)).toEqual([]);
    expect(ids(vector)).toEqual(expect.arrayContaining([jira.fact.id]));
    const listed = await m.memory.semantic.findFacts({ userId, activeConnections: [] });
    expect(listed.map((f) => f.id)).toEqual([plain.fact.id]);
    // Without activeConnections nothing is scoped (everything of the user, as before connections).
    expect(ids(await m.memory.semantic.searchFactsText({ userId, query: 'default project', topK: 10 }))).toEqual([jira.fact.id, gmail.fact.id, plain.fact.id].sort());

    // Graph: facts about an entity.
    const tool = await m.memory.upsertEntity({ userId, name: 'Default project', type: 'concept' });
    const about = async (claim: string, connectionId?: string) => (await m.memory.storeFact({ userId, claim, connectionId, aboutEntityIds: [tool.entity.id] })).fact.id;
    const aboutJira = await about('Default project PROJ is used for bugs', 'jira-1');
    await about('Default project INBOX is used for mail', 'gmail-1');
    const graph = await m.memory.getEntityGraph({ userId, entityIds: [tool.entity.id], activeConnections: ['jira-1'] });
    expect(graph.facts.map((f) => f.id)).toEqual([aboutJira]);

    // Recall end to end, and turns carrying a connection in their metadata.
    const conversationId = uid('c');
    await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'Put the invoice email into the INBOX-TRIAGE filter project', metadata: { connectionId: 'gmail-1' } });
    await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'File the login bug under the PROJ project please', metadata: { connectionId: 'jira-1' } });
    for (const techniques of [{ vector: false }, { fulltext: false }, {}]) {
      const b = await m.memory.remember({ userId, query: 'which project should this go into?', activeConnections: ['jira-1'], topK: 20, techniques });
      const facts = b.facts.map((f) => f.id);
      expect(facts).not.toContain(gmail.fact.id);
      expect(b.turns.map((t) => t.turn.metadata.connectionId)).not.toContain('gmail-1');
      expect(b.turns.map((t) => t.turn.metadata.connectionId)).toContain('jira-1');
    }
    expect((await m.memory.remember({ userId, query: 'which project should this go into?', activeConnections: ['jira-1'], topK: 20 })).facts.map((f) => f.id)).toContain(jira.fact.id);
    const both = await m.memory.remember({ userId, query: 'which project should this go into?', activeConnections: ['jira-1', 'gmail-1'], topK: 20 });
    expect(both.facts.map((f) => f.id)).toEqual(expect.arrayContaining([jira.fact.id, gmail.fact.id]));
    expect(both.turns.map((t) => t.turn.metadata.connectionId).sort()).toEqual(['gmail-1', 'jira-1']);
  }, 90_000);

  it('learned info: merge, replace, normalised JSON strings, and the context block of the active connections only', async () => {
    const userId = uid('u');
    expect((await m.memory.writeLearnedInfo({ userId, connectionId: 'jira-1', info: { default_project: 'PROJ', fields: '{"priority": "High", "labels": ["backend"]}' } })).info).toEqual({
      default_project: 'PROJ',
      fields: { priority: 'High', labels: ['backend'] },
    });
    const merged = await m.memory.writeLearnedInfo({ userId, connectionId: 'jira-1', info: { preferred_issue_type: 'Task', fields: null } });
    expect(merged.info).toEqual({ default_project: 'PROJ', preferred_issue_type: 'Task' });
    await m.memory.writeLearnedInfo({ userId, connectionId: 'gmail-1', info: { signature: 'Best, Ana' } });
    expect((await m.memory.writeLearnedInfo({ userId, connectionId: 'gmail-1', info: { signature: 'Cheers', folder: 'Work' }, mode: 'replace' })).info).toEqual({
      signature: 'Cheers',
      folder: 'Work',
    });
    expect((await m.memory.writeLearnedInfo({ userId, connectionId: 'gmail-1', info: { folder: 'Personal' }, mode: 'replace' })).info).toEqual({ folder: 'Personal' });
    await expect(m.memory.writeLearnedInfo({ userId, connectionId: 'bad id!', info: {} })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(m.memory.writeLearnedInfo({ userId, connectionId: 'jira-1', info: [] as never })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await m.memory.getLearnedInfo(userId)).map((l) => l.connectionId)).toEqual(['gmail-1', 'jira-1']);

    await m.memory.learnFact({ userId, claim: 'The user works on the billing service' });
    const b = await m.memory.remember({ userId, query: 'what does the user work on?', activeConnections: ['jira-1'] });
    expect(b.learnedInfo).toEqual([{ connectionId: 'jira-1', info: { default_project: 'PROJ', preferred_issue_type: 'Task' }, updatedAt: expect.any(String) }]);
    const block = formatContext(b, { tokenBudget: 400 });
    expect(block).toContain('[connection:jira-1] learned info: default project: PROJ; preferred issue type: Task');
    expect(block).not.toContain('Personal');
    expect((await m.memory.remember({ userId, query: 'what does the user work on?' })).learnedInfo).toBeUndefined();
    expect(await m.memory.deleteLearnedInfo(userId, 'gmail-1')).toEqual({ deleted: true });
    await expect(m.memory.deleteLearnedInfo(userId, 'gmail-1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  }, 60_000);

  it('an observation learned on a connection becomes a fact of that connection', async () => {
    const userId = uid('u');
    await m.memory.recordObservation(userId, 'prefers Kanban boards over Scrum boards', 'preference', { connectionId: 'jira-1' });
    await m.memory.recordObservation(userId, 'likes answers in bullet points', 'preference');
    expect(await m.jobs.consolidate(jobContext([userId]))).toMatchObject({ observations: 2 });
    const facts = await m.memory.semantic.findFacts({ userId });
    expect(facts.length).toBeGreaterThanOrEqual(2);
    const byConnection = Object.fromEntries(facts.map((f) => [f.claim, f.connectionId]));
    expect(
      Object.entries(byConnection)
        .filter(([claim]) => /Kanban/i.test(claim))
        .every(([, c]) => c === 'jira-1'),
    ).toBe(true);
    expect(
      Object.entries(byConnection)
        .filter(([claim]) => /bullet/i.test(claim))
        .every(([, c]) => c === null),
    ).toBe(true);
    expect((await m.memory.semantic.findFacts({ userId, activeConnections: [] })).some((f) => /Kanban/i.test(f.claim))).toBe(false);
  }, 60_000);
});

describe('per-user settings', () => {
  const seedFacts = async (userId: string) => {
    for (const claim of ['The user lives in Lisbon', 'The user lived in Porto before', 'The user visits Lisbon markets', 'The user likes Lisbon trams', 'The user studied in Lisbon']) {
      await m.memory.learnFact({ userId, claim });
    }
  };

  it('memory off: recall returns nothing and says why; default topK and rerank fill what a call leaves unset', async () => {
    const userId = uid('u');
    await seedFacts(userId);
    const ask = { userId, query: 'Lisbon', includeEpisodic: false };
    expect((await m.memory.remember(ask)).facts.length).toBeGreaterThanOrEqual(3);
    await m.memory.updateSettings({ userId, defaultTopK: 2, rerank: true });
    const limited = await m.memory.remember(ask);
    expect(limited.facts).toHaveLength(2);
    expect(limited.degraded).toContain('rerank: no reranker configured; fused order kept'); // rerank switched on by the setting
    expect((await m.memory.remember({ ...ask, topK: 4 })).facts).toHaveLength(4);
    expect((await m.memory.remember({ ...ask, techniques: { rerank: false } })).degraded).not.toContain('rerank: no reranker configured; fused order kept');

    await m.memory.updateSettings({ userId, memoryEnabled: false });
    const off = await m.memory.remember(ask);
    expect(off).toMatchObject({ facts: [], turns: [], entities: [], skipped: 'memory is disabled in this user’s settings' });
    expect(formatContext(off)).toBe('');
    expect(await m.memory.getSettings(userId)).toMatchObject({ memoryEnabled: false, defaultTopK: 2, rerank: true, autoMine: true });
    // A user who never changed anything reads the defaults.
    expect(await m.memory.getSettings(uid('u'))).toMatchObject({ memoryEnabled: true, defaultTopK: null, rerank: null, autoMine: true, agents: {}, updatedAt: null });
  }, 60_000);

  it("an agent's override skips its recall while the worker still mines; mining off skips the user", async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    await m.memory.updateSettings({ userId, agents: { orchestrator: { recall: false } } });
    await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'My sister Marta lives in Coimbra.' });
    const mined = await m.jobs.consolidate(jobContext([userId]));
    expect(mined).toMatchObject({ conversations: 1, usersMiningOff: 0 });
    expect((await m.memory.semantic.findFacts({ userId })).length).toBeGreaterThan(0);
    const orchestrator = m.memory.as(keyPrincipal(null, null, 'orchestrator'));
    const skipped = await orchestrator.remember({ userId, query: 'Where does Marta live?' });
    expect(skipped.skipped).toMatch(/orchestrator/);
    expect(skipped.facts).toEqual([]);
    const other = await m.memory.as(keyPrincipal(null, null, 'helper')).remember({ userId, query: 'Where does Marta live?' });
    expect(other.skipped).toBeUndefined();
    expect(other.facts.length + other.turns.length).toBeGreaterThan(0);

    // Automatic mining off: the conversation's new turns wait; on again, they are mined.
    await m.memory.updateSettings({ userId, autoMine: false });
    await m.memory.storeTurn({ userId, conversationId, role: 'user', content: 'My brother Rui works at Siemens.' });
    await m.memory.recordObservation(userId, 'prefers trains to planes', 'preference');
    expect(await m.jobs.consolidate(jobContext([userId]))).toMatchObject({ conversations: 0, observations: 0, usersMiningOff: 1 });
    await m.memory.updateSettings({ userId, autoMine: true });
    expect(await m.jobs.consolidate(jobContext([userId]))).toMatchObject({ conversations: 1, observations: 1, usersMiningOff: 0 });
  }, 90_000);
});

describe('whole-user operations cover the tiers', () => {
  it('export, forget-user and import include short-term entries, learned info and settings', async () => {
    const userId = uid('u');
    await m.memory.shortTerm.write({ userId, sessionId: 's', key: 'k', type: 'task_context', value: { a: 1 } });
    await m.memory.writeLearnedInfo({ userId, connectionId: 'jira-1', info: { default_project: 'PROJ' } });
    await m.memory.updateSettings({ userId, defaultTopK: 4 });
    const lines: ExportLine[] = [];
    for await (const line of m.users.export(userId)) lines.push(line);
    const tables = lines.filter((l) => l.kind === 'row').map((l) => (l as { table: string }).table);
    expect(tables).toEqual(expect.arrayContaining(['short_term_entries', 'connection_learned_info', 'user_memory_settings']));
    expect((await m.users.stats(userId)).rows).toMatchObject({ short_term_entries: 1, connection_learned_info: 1, user_memory_settings: 1 });

    const report = await m.users.erase(userId);
    expect(report.rowsDeleted).toMatchObject({ short_term_entries: 1, connection_learned_info: 1, user_memory_settings: 1 });
    expect(await m.memory.shortTerm.list({ userId })).toEqual([]);
    expect((await m.memory.getSettings(userId)).defaultTopK).toBeNull();

    await m.users.import(lines);
    expect((await m.memory.shortTerm.get({ userId, sessionId: 's', key: 'k' })).value).toEqual({ a: 1 });
    expect((await m.memory.getLearnedInfo(userId))[0]!.info).toEqual({ default_project: 'PROJ' });
    expect((await m.memory.getSettings(userId)).defaultTopK).toBe(4);
    expect(userScope(userId).connections).toBeNull();
  }, 60_000);
});
