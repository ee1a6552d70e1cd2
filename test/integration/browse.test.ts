import { externalExportLine } from '../../src/browse/memory-browser';
import { eventually, uid } from '../support/stack';
import { openHarness, seedUser, type Harness } from './api-harness';

/**
 * Browsing and curation over real HTTP and the real stores: listings page through what was
 * written, the edits change what recall and the timeline show, deletions go from Neo4j and
 * Postgres and say first what they will take, and every edit lands in the audit log.
 */
let h: Harness;
let A: { tenantId: string; key: string; keyId: string };
beforeAll(async () => {
  h = await openHarness({ AUDIT_LEVEL: 'reads' });
  A = await h.tenant();
});
afterAll(async () => h.close());

const auditRows = async (userId: string, operation: string) => {
  await h.m.audit.flush();
  return (await h.m.pg.primary.query('SELECT affected_ids, metadata FROM memory_audit_log WHERE user_id = $1 AND operation = $2', [`${A.tenantId}.${userId}`, operation])).rows;
};

describe('browse routes', () => {
  it('whoami names the key; listUsers pages through the tenant’s users with their counts', async () => {
    const me = await h.call(A.key, 'GET', '/v1/whoami');
    expect(me.body).toEqual({ tenantId: A.tenantId, keyId: A.keyId, role: 'admin', agentId: null });
    const users = [];
    for (let i = 0; i < 3; i++) users.push((await seedUser(h, A.key)).userId);
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await h.call(A.key, 'GET', `/v1/users?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.users.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.users);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.map((x) => x.userId).sort()).toEqual([...users].sort());
    expect(seen[0].counts).toMatchObject({ Conversation: 1, Turn: 2, Entity: 2, Fact: 2, Goal: 2, Strategy: 1 });
  });

  it('pages a long conversation in order, and lists conversations newest first', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const turns = Array.from({ length: 250 }, (_, i) => ({ userId, conversationId, role: i % 2 ? 'assistant' : 'user', content: `line ${i}` }));
    expect((await h.call(A.key, 'POST', '/v1/turns/batch', { turns })).status).toBe(201);
    const other = uid('c');
    expect((await h.call(A.key, 'POST', '/v1/turns', { userId, conversationId: other, role: 'user', content: 'later', channel: 'travel' })).status).toBe(201);

    const list = await h.call(A.key, 'GET', `/v1/users/${userId}/conversations?limit=1`);
    expect(list.body.conversations).toEqual([expect.objectContaining({ conversationId: other, channel: 'travel', turns: 1 })]);
    const next = await h.call(A.key, 'GET', `/v1/users/${userId}/conversations?limit=1&cursor=${list.body.nextCursor}`);
    expect(next.body.conversations).toEqual([expect.objectContaining({ conversationId, turns: 250 })]);
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/conversations?cursor=junk`)).status).toBe(400);

    const contents: string[] = [];
    let after = -1;
    for (;;) {
      const page = await h.call(A.key, 'GET', `/v1/users/${userId}/conversations/${conversationId}/turns?afterIndex=${after}&limit=100`);
      expect(page.body.total).toBe(250);
      contents.push(...page.body.turns.map((t: any) => t.content));
      if (page.body.nextAfterIndex === null) break;
      after = page.body.nextAfterIndex;
    }
    expect(contents).toEqual(turns.map((t) => t.content));
  });

  it('deletes a turn and a conversation for real, after a dry run that says what goes; audited', async () => {
    const u = await seedUser(h, A.key);
    const conv = `/v1/users/${u.userId}/conversations/${u.conversationId}`;
    const dry = await h.call(A.key, 'DELETE', `${conv}/turns/0?dryRun=true`);
    expect(dry.body).toMatchObject({ dryRun: true, turns: 1, conversation: false, derivedFacts: 1, counts: { fact: { delete: 1, keep: 0 } } });
    expect(dry.body.items).toEqual(expect.arrayContaining([{ kind: 'fact', id: u.factId, label: 'The user lives in Lisbon', action: 'delete', why: 'learned only from the deleted turns' }]));
    expect(dry.body.summary).toMatch(/learned only from it: 1 fact would go/);
    expect((await h.call(A.key, 'GET', conv)).body.turns).toHaveLength(2);

    const gone = await h.call(A.key, 'DELETE', `${conv}/turns/0`);
    expect(gone.body).toMatchObject({ dryRun: false, turns: 1 });
    expect((await h.call(A.key, 'GET', conv)).body.turns.map((t: any) => t.index)).toEqual([1]);
    expect((await h.call(A.key, 'DELETE', `${conv}/turns/0`)).status).toBe(404);
    const logRows = await h.m.pg.primary.query('SELECT turn_index FROM conversation_logs WHERE conversation_id = $1', [`${A.tenantId}.${u.conversationId}`]);
    expect(logRows.rows.map((r) => r.turn_index)).toEqual([1]);
    // The fact learned only from the deleted turn goes with it.
    expect((await h.call(A.key, 'GET', `/v1/users/${u.userId}/facts/${u.factId}`)).status).toBe(404);

    const dryConv = await h.call(A.key, 'DELETE', `${conv}?dryRun=true`);
    expect(dryConv.body).toMatchObject({ dryRun: true, turns: 1, conversation: true, workingMemory: true });
    const convGone = await h.call(A.key, 'DELETE', conv);
    expect(convGone.body).toMatchObject({ dryRun: false, turns: 1, conversation: true });
    expect((await h.call(A.key, 'GET', conv)).status).toBe(404);
    expect((await h.call(A.key, 'GET', `/v1/users/${u.userId}/conversations`)).body.conversations).toEqual([]);
    const recall = await h.call(A.key, 'POST', '/v1/recall', { userId: u.userId, query: 'How do you like the city?' });
    expect(recall.body.turns).toEqual([]);
    expect((await h.call(A.key, 'GET', `${u.s}`)).body.recentTurns).toEqual([]);

    expect(await auditRows(u.userId, 'delete_turn')).toEqual([expect.objectContaining({ affected_ids: [`${A.tenantId}.${u.conversationId}:0`] })]);
    expect(await auditRows(u.userId, 'delete_conversation')).toHaveLength(1);
  });

  it('deleting a turn trims the session’s recent turns in Redis: it no longer comes back from working memory', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const turns = ['first: my passport number is 123', 'second', 'third'].map((content) => ({ userId, conversationId, role: 'user', content }));
    expect((await h.call(A.key, 'POST', '/v1/turns/batch', { turns })).status).toBe(201);
    const session = `/v1/users/${userId}/sessions/${conversationId}`;
    expect((await h.call(A.key, 'GET', session)).body.recentTurns.map((t: any) => t.index)).toEqual([2, 1, 0]);
    const redisKey = `working:${A.tenantId}.${userId}:_global:${A.tenantId}.${conversationId}:turns`;
    expect(await h.m.redis.llen(redisKey)).toBe(3);

    expect((await h.call(A.key, 'DELETE', `/v1/users/${userId}/conversations/${conversationId}/turns/0?dryRun=true`)).status).toBe(200);
    expect(await h.m.redis.llen(redisKey)).toBe(3); // a dry run changes nothing
    expect((await h.call(A.key, 'DELETE', `/v1/users/${userId}/conversations/${conversationId}/turns/0`)).status).toBe(200);

    const after = (await h.call(A.key, 'GET', session)).body.recentTurns;
    expect(after.map((t: any) => t.index)).toEqual([2, 1]);
    expect(JSON.stringify(after)).not.toContain('passport');
    const raw = await h.m.redis.lrange(redisKey, 0, -1);
    expect(raw.map((r) => JSON.parse(r).index)).toEqual([2, 1]);
    expect(await h.m.redis.ttl(redisKey)).toBeGreaterThan(0); // the list keeps its expiry
    // The next turn is added on top of what is left.
    expect((await h.call(A.key, 'POST', '/v1/turns', { userId, conversationId, role: 'assistant', content: 'fourth' })).status).toBe(201);
    expect((await h.call(A.key, 'GET', session)).body.recentTurns.map((t: any) => t.index)).toEqual([3, 2, 1]);
  });

  it('lists entities and facts with filters; restores a retracted fact; refuses to restore a superseded one', async () => {
    const u = await seedUser(h, A.key);
    const byName = await h.call(A.key, 'GET', `/v1/users/${u.userId}/entities?q=lisb`);
    expect(byName.body.entities.map((e: any) => e.name)).toEqual(['Lisbon']);
    const people = await h.call(A.key, 'GET', `/v1/users/${u.userId}/entities?type=person`);
    expect(people.body.entities.map((e: any) => e.name)).toEqual(['Ana Souza']);
    const page1 = await h.call(A.key, 'GET', `/v1/users/${u.userId}/entities?limit=1`);
    const page2 = await h.call(A.key, 'GET', `/v1/users/${u.userId}/entities?limit=1&cursor=${page1.body.nextCursor}`);
    expect([...page1.body.entities, ...page2.body.entities].map((e: any) => e.name)).toEqual(['Ana Souza', 'Lisbon']);

    const past = await h.call(A.key, 'GET', `/v1/users/${u.userId}/facts?status=past`);
    expect(past.body.facts.map((f: any) => [f.id, f.status])).toEqual([[u.retractedFactId, 'retracted']]);
    const restored = await h.call(A.key, 'POST', `/v1/users/${u.userId}/facts/${u.retractedFactId}/restore`, { reason: 'bought it back' });
    expect(restored.body).toMatchObject({ id: u.retractedFactId, status: 'active', validTo: null });
    expect((await h.call(A.key, 'GET', `/v1/users/${u.userId}/facts?status=past`)).body.facts).toEqual([]);
    expect(await auditRows(u.userId, 'restore_fact')).toEqual([expect.objectContaining({ affected_ids: [u.retractedFactId] })]);

    const corrected = await h.call(A.key, 'POST', '/v1/facts/correct', { userId: u.userId, factId: u.factId, claim: 'The user lives in Porto' });
    expect(corrected.status).toBe(200);
    const refused = await h.call(A.key, 'POST', `/v1/users/${u.userId}/facts/${u.factId}/restore`, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/superseded/);
    const about = await h.call(A.key, 'GET', `/v1/users/${u.userId}/facts?status=all&entityId=${u.entityId}`);
    expect(about.body.facts.map((f: any) => [f.claim, f.status]).sort()).toEqual([
      ['The user lives in Lisbon', 'superseded'],
      ['The user lives in Porto', 'active'],
    ]);
  });

  it('lists a user’s strategies page by page, filtered by channel, text, tool and success rate, sorted', async () => {
    const userId = uid('u');
    const learn = async (description: string, toolSequence: string[], channel = '_global', success = true) => {
      const r = await h.call(A.key, 'POST', '/v1/strategies', { userId, description, toolSequence, channel, success, contextPattern: `task: ${description}` });
      expect(r.status).toBe(201);
      return r.body.strategy.id as string;
    };
    const a = await learn('Search listings then compare prices', ['search_listings', 'compare']);
    const b = await learn('Ask for the budget first', ['ask']);
    const c = await learn('Book a viewing by phone', ['call'], 'travel', false);
    for (let i = 0; i < 3; i++) expect((await h.call(A.key, 'POST', `/v1/users/${userId}/strategies/${b}/reinforce`, { success: true })).status).toBe(200);
    const list = async (qs: string) => {
      const r = await h.call(A.key, 'GET', `/v1/users/${userId}/strategies?${qs}`);
      expect(r.status).toBe(200);
      return r.body as { strategies: any[]; nextCursor: string | null };
    };
    expect((await list('sort=success')).strategies.map((s) => s.id)).toEqual([b, a, c]);
    expect((await list('sort=uses')).strategies.map((s) => s.id)[0]).toBe(b);
    expect((await list('q=LISTINGS')).strategies.map((s) => s.id)).toEqual([a]);
    expect((await list('tool=call')).strategies.map((s) => s.id)).toEqual([c]);
    expect((await list('channel=travel')).strategies.map((s) => s.id)).toEqual([c]);
    expect((await list('minSuccessRate=0.5')).strategies.map((s) => s.id).sort()).toEqual([a, b].sort());
    const first = await list('sort=success&limit=2');
    expect(first.strategies.map((s) => s.id)).toEqual([b, a]);
    expect(first.nextCursor).not.toBeNull();
    const second = await list(`sort=success&limit=2&cursor=${first.nextCursor}`);
    expect(second).toEqual({ strategies: [expect.objectContaining({ id: c, channel: 'travel', successRate: expect.closeTo(1 / 3, 5) })], nextCursor: null });
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/strategies?sort=best`)).status).toBe(400);
    expect((await h.call(A.key, 'GET', `/v1/users/${userId}/strategies?cursor=junk`)).status).toBe(400);
    const other = await h.tenant();
    expect((await h.call(other.key, 'GET', `/v1/users/${userId}/strategies`)).status).toBe(404);
  });

  it('exports a user over HTTP, streamed: the same lines as the CLI export; audited; another tenant gets 404', async () => {
    const u = await seedUser(h, A.key);
    const res = await fetch(`${h.url}/v1/users/${u.userId}/export`, { headers: { authorization: `Bearer ${A.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await res.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const internal = `${A.tenantId}.${u.userId}`;
    expect(lines[0]).toMatchObject({ kind: 'header', format: 'mnemograph-user-export', userId: u.userId });
    const cli: any[] = [];
    for await (const line of h.m.users.export(internal)) cli.push(line);
    const withoutTime = (l: any) => (l.kind === 'header' ? { ...l, exportedAt: null } : l);
    // The CLI's lines, with the tenant's ids (as every answer of the API), and nothing namespaced left.
    expect(lines.map(withoutTime)).toEqual(cli.map((l) => withoutTime(externalExportLine(l, `${A.tenantId}.`))));
    expect(JSON.stringify(lines)).not.toContain(`${A.tenantId}.`);
    const kinds = new Set(lines.map((l) => (l.kind === 'node' ? l.labels[0] : l.kind === 'row' ? l.table : l.kind)));
    for (const k of ['Turn', 'Fact', 'Entity', 'Strategy', 'Goal', 'rel', 'conversation_logs']) expect(kinds).toContain(k);
    expect(JSON.stringify(lines)).toContain('I moved to Lisbon last spring.');
    await eventually(async () => (await auditRows(u.userId, 'export_user')).length === 1, 'the export audited');
    expect((await auditRows(u.userId, 'export_user'))[0].metadata).toMatchObject({ lines: lines.length, completed: true });

    const other = await h.tenant();
    expect((await h.call(other.key, 'GET', `/v1/users/${u.userId}/export`)).status).toBe(404);
    expect((await h.call(A.key, 'GET', `/v1/users/${uid('nobody')}/export`)).status).toBe(404);
  });

  it('pages a pool’s entries (the studio’s pool view) and restores a version, audited with the key', async () => {
    const poolId = uid('p');
    expect((await h.call(A.key, 'POST', '/v1/pools', { poolId, name: 'paged', type: 'shared' })).status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.call(A.key, 'POST', `/v1/pools/${poolId}/entries`, { content: `note ${i}` })).body.id);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page: any = await h.call(A.key, 'POST', `/v1/pools/${poolId}/entries/list`, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.entries.map((e: any) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await h.call(A.key, 'POST', `/v1/pools/${poolId}/entries/list`, { cursor: 'junk' })).status).toBe(400);

    const e = `/v1/pools/${poolId}/entries/${ids[0]}`;
    expect((await h.call(A.key, 'PUT', e, { content: 'note 0, edited' })).status).toBe(200);
    const restored = await h.call(A.key, 'POST', `${e}/restore`, { version: 1 });
    expect(restored.body).toMatchObject({ content: 'note 0', version: 3 });
    const history = await h.call(A.key, 'GET', `${e}/versions`);
    expect(history.body.versions.map((v: any) => [v.version, v.change])).toEqual([
      [1, 'create'],
      [2, 'update'],
      [3, 'restore'],
    ]);
    await h.m.audit.flush();
    const rows = await h.m.pg.primary.query("SELECT metadata FROM memory_audit_log WHERE tenant_id = $1 AND operation LIKE 'restore%' AND memory_type = 'shared'", [A.tenantId]);
    expect(rows.rows.map((r) => r.metadata.actor)).toEqual([expect.objectContaining({ keyId: A.keyId })]);
  });

  it('merges two entities: aliases, facts, relationships and mentions move; the merged one is closed', async () => {
    const u = await seedUser(h, A.key);
    const lx = await h.call(A.key, 'POST', '/v1/entities', { userId: u.userId, name: 'LX', type: 'place', sourceTurnId: `${u.conversationId}:0` });
    const lxId = lx.body.entity.id;
    await h.call(A.key, 'POST', '/v1/facts', { userId: u.userId, claim: 'LX has trams', aboutEntityIds: [lxId] });
    await h.call(A.key, 'POST', '/v1/relationships', { userId: u.userId, sourceId: u.personId, targetId: lxId, type: 'LOCATED_IN' });
    const merged = await h.call(A.key, 'POST', '/v1/entities/merge', { userId: u.userId, keepId: u.entityId, mergeId: lxId });
    expect(merged.status).toBe(200);
    expect(merged.body.entity.aliases).toEqual(expect.arrayContaining(['Lisboa', 'LX']));
    expect(merged.body.moved).toEqual({ facts: 1, relationships: 1, mentions: 1 });
    expect((await h.call(A.key, 'GET', `/v1/users/${u.userId}/entities/${lxId}`)).status).toBe(404);
    const graph = await h.call(A.key, 'POST', '/v1/entities/graph', { userId: u.userId, entityIds: [u.entityId] });
    expect(graph.body.relationships).toEqual([expect.objectContaining({ type: 'LOCATED_IN', sourceId: u.personId, targetId: u.entityId })]);
    expect(graph.body.facts.map((f: any) => f.claim)).toEqual(expect.arrayContaining(['LX has trams', 'The user lives in Lisbon']));
    expect((await h.call(A.key, 'POST', '/v1/entities/merge', { userId: u.userId, keepId: u.entityId, mergeId: u.entityId })).status).toBe(400);
    expect((await h.call(A.key, 'POST', '/v1/entities/merge', { userId: u.userId, keepId: u.entityId, mergeId: lxId })).status).toBe(404);
    expect(await auditRows(u.userId, 'merge_entities')).toHaveLength(1);
  });

  it('a reviewer key sees who it is and the counts, never content; another tenant sees none of it', async () => {
    const reviewer = (await h.srv.api.tenants.createKey(A.tenantId, { name: 'review', role: 'reviewer' })).key;
    expect((await h.call(reviewer, 'GET', '/v1/whoami')).body).toMatchObject({ role: 'reviewer', tenantId: A.tenantId });
    const users = await h.call(reviewer, 'GET', '/v1/users');
    expect(users.status).toBe(200);
    expect(JSON.stringify(users.body)).not.toMatch(/Lisbon|sailing/);
    const u = users.body.users[0].userId;
    expect((await h.call(reviewer, 'GET', `/v1/users/${u}/conversations`)).status).toBe(403);
    expect((await h.call(reviewer, 'GET', `/v1/users/${u}/facts`)).status).toBe(403);
    const B = await h.tenant();
    expect((await h.call(B.key, 'GET', '/v1/users')).body.users).toEqual([]);
    expect((await h.call(B.key, 'GET', `/v1/users/${u}/conversations`)).status).toBe(404);
  });
});
