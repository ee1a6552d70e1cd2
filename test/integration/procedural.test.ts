import { createMnemograph, type Mnemograph } from '../../src/container';
import { NotFoundError, ValidationError } from '../../src/errors';
import { testConfig, uid } from '../support/stack';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ AUDIT_LEVEL: 'writes', EMBEDDING_MODE: 'deferred', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

const tag = { subsystem: 'test', op: 'check' };
async function count(cypher: string, params: Record<string, unknown>): Promise<number> {
  return (await m.neo4j.read<{ n: number }>(cypher, params, tag))[0]!.n;
}
async function pgRows(userId: string): Promise<Array<Record<string, unknown>>> {
  return (await m.pg.primary.query('SELECT * FROM tool_invocations WHERE user_id = $1 ORDER BY timestamp, invocation_id', [userId])).rows;
}

describe('recordInvocation', () => {
  it('writes the graph and the Postgres row once per invocation id', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const toolName = uid('tool');
    const { turn } = await m.memory.storeTurn({ userId, conversationId, role: 'assistant', content: 'Searching the web for flights.' });
    const input = {
      userId,
      conversationId,
      invocationId: uid('inv'),
      turnId: turn.id,
      toolName,
      toolInput: { query: 'flights to Lisbon', max: 5 },
      toolOutput: ['TAP 123', 'Ryanair 9'],
      success: true,
      latencyMs: 120,
      taskType: 'travel',
    };
    const first = await m.memory.recordInvocation(input);
    expect(first.created).toBe(true);
    expect(first.invocation).toMatchObject({ userId, conversationId, turnIndex: 0, toolName, toolInput: input.toolInput, toolOutput: input.toolOutput, success: true, latencyMs: 120 });
    const again = await m.memory.recordInvocation(input);
    expect(again.created).toBe(false);

    expect(
      await count('MATCH (:Conversation {id: $c})-[:USED_TOOL]->(i:ToolInvocation {id: $id})-[:INVOKED]->(:Tool {name: $t}) RETURN count(i) AS n', {
        c: conversationId,
        id: input.invocationId,
        t: toolName,
      }),
    ).toBe(1);
    const tool = await m.neo4j.read<{ usage: number; ok: number; avg: number }>(
      'MATCH (t:Tool {name: $t}) RETURN t.usage_count AS usage, t.success_count AS ok, t.avg_latency_ms AS avg',
      { t: toolName },
      tag,
    );
    expect(tool[0]).toEqual({ usage: 1, ok: 1, avg: 120 });
    const rows = await pgRows(userId);
    expect(rows).toHaveLength(1);
    await m.audit.flush();
    const audit = await m.pg.primary.query("SELECT affected_ids FROM memory_audit_log WHERE user_id = $1 AND operation = 'record_invocation'", [userId]);
    expect(audit.rows.map((r) => r.affected_ids)).toEqual([[input.invocationId]]);
    expect(rows[0]).toMatchObject({
      invocation_id: input.invocationId,
      conversation_id: conversationId,
      turn_index: 0,
      tool_name: toolName,
      tool_input: input.toolInput,
      tool_output: input.toolOutput,
      success: true,
      latency_ms: 120,
      channel: '_global',
    });
  });

  it("creates a new conversation for its owner and refuses another user's conversation without writing", async () => {
    const [owner, intruder] = [uid('owner'), uid('intruder')];
    const conversationId = uid('c');
    await m.memory.recordInvocation({ userId: owner, conversationId, toolName: 'calc', toolInput: { expr: '1+1' }, toolOutput: 2, success: true, latencyMs: 3 });
    expect(await count('MATCH (:User {id: $u})-[:HAS_CONVERSATION]->(c:Conversation {id: $c}) RETURN count(c) AS n', { u: owner, c: conversationId })).toBe(1);
    await expect(m.memory.recordInvocation({ userId: intruder, conversationId, toolName: 'calc', success: false, latencyMs: 1 })).rejects.toThrow(ValidationError);
    await expect(m.memory.recordInvocation({ userId: owner, channel: 'other', conversationId, toolName: 'calc', success: false, latencyMs: 1 })).rejects.toThrow(ValidationError);
    expect(await pgRows(intruder)).toHaveLength(0);
    expect(await count('MATCH (i:ToolInvocation) WHERE i.conversation_id = $c RETURN count(i) AS n', { c: conversationId })).toBe(1);
  });

  it('reports per-tool stats of the user, by channel and task type', async () => {
    const userId = uid('u');
    const c = uid('c');
    const call = (toolName: string, success: boolean, latencyMs: number, taskType?: string, channel = '_global') =>
      m.memory.recordInvocation({ userId, channel, conversationId: channel === '_global' ? c : `${c}-p`, toolName, success, latencyMs, taskType });
    await call('search', true, 100, 'research');
    await call('search', false, 300, 'research');
    await call('search', true, 200, 'coding');
    await call('compile', true, 50, 'coding');
    await call('deploy', true, 10, 'ops', 'proj');
    const stats = await m.memory.getToolStats({ userId });
    expect(stats.map((s) => [s.toolName, s.invocations, s.successes, s.avgLatencyMs])).toEqual([
      ['search', 3, 2, 200],
      ['compile', 1, 1, 50],
    ]);
    expect(stats[0]!.successRate).toBeCloseTo(2 / 3);
    expect((await m.memory.getToolStats({ userId, taskType: 'research' })).map((s) => s.invocations)).toEqual([2]);
    expect((await m.memory.getToolStats({ userId, channels: ['proj'] })).map((s) => s.toolName)).toEqual(['search', 'compile', 'deploy']);
    expect(await m.memory.getToolStats({ userId: uid('u') })).toEqual([]);
  });

  it('rejects bad input before writing', async () => {
    const userId = uid('u');
    const conversationId = uid('c');
    const bad = [
      { userId, conversationId, toolName: 'bad name!', success: true, latencyMs: 1 },
      { userId, conversationId, toolName: 't', success: true, latencyMs: -1 },
      { userId, conversationId, toolName: 't', latencyMs: 1 },
      { userId, conversationId, toolName: 't', success: true, latencyMs: 1, toolInput: { big: 'x'.repeat(100_001) } },
      { userId, conversationId, toolName: 't', success: true, latencyMs: 1, turnId: 'other-conv:3' },
    ];
    for (const input of bad) await expect(m.memory.recordInvocation(input as Parameters<typeof m.memory.recordInvocation>[0])).rejects.toThrow(ValidationError);
    expect(await count('MATCH (c:Conversation {id: $c}) RETURN count(c) AS n', { c: conversationId })).toBe(0);
    expect(await pgRows(userId)).toHaveLength(0);
  });
});

describe('strategies', () => {
  it('learns, finds by task (vector + full-text), reinforces, and counts a conversation once', async () => {
    const userId = uid('u');
    const conv = uid('c');
    await m.memory.storeTurn({ userId, conversationId: conv, role: 'user', content: 'CI is red again' });
    const ci = await m.memory.learnStrategy({
      userId,
      description: 'Fix a failing CI build: read the failing job log, reproduce locally, patch, rerun the pipeline',
      contextPattern: 'failing continuous integration build',
      toolSequence: ['ci_logs', 'shell', 'git_push'],
      fromConversationId: conv,
    });
    expect(ci.created).toBe(true);
    expect(ci.strategy).toMatchObject({ successCount: 1, failureCount: 0, toolSequence: ['ci_logs', 'shell', 'git_push'] });
    // Same conversation again: not counted twice. Another conversation: reinforced.
    expect(
      (
        await m.memory.learnStrategy({
          userId,
          description: 'Fix CI',
          contextPattern: 'failing continuous integration build',
          toolSequence: ['ci_logs', 'shell', 'git_push'],
          fromConversationId: conv,
        })
      ).strategy.successCount,
    ).toBe(1);
    await m.memory.learnStrategy({
      userId,
      description: 'Plan a trip: search flights, compare prices, book the cheapest',
      contextPattern: 'travel booking',
      toolSequence: ['flight_search', 'booking'],
    });
    await m.memory.learnStrategy({ userId, description: 'Summarise a long PDF report chapter by chapter', contextPattern: 'document summary', toolSequence: ['pdf_reader'] });

    expect(await count('MATCH (:Strategy {id: $id})-[:USES_TOOL]->(t:Tool) RETURN count(t) AS n', { id: ci.strategy.id })).toBe(3);
    expect(await count('MATCH (:Strategy {id: $id})-[:SUCCEEDED_IN]->(:Conversation {id: $c}) RETURN count(*) AS n', { id: ci.strategy.id, c: conv })).toBe(1);

    const found = await m.memory.findStrategies({ userId, task: 'the CI pipeline build keeps failing, what should I do?', topK: 2 });
    expect(found[0]!.strategy.id).toBe(ci.strategy.id);
    expect(found).toHaveLength(2);

    const after = await m.memory.reinforceStrategy(userId, ci.strategy.id, false);
    expect(after).toMatchObject({ successCount: 1, failureCount: 1, successRate: 0.5 });
    expect(after.lastUsed).not.toBeNull();
    expect((await m.memory.findStrategies({ userId, task: 'failing CI build', minSuccessRate: 0.6 })).map((f) => f.strategy.id)).not.toContain(ci.strategy.id);

    const stranger = uid('u');
    expect(await m.memory.findStrategies({ userId: stranger, task: 'failing CI build' })).toEqual([]);
    await expect(m.memory.reinforceStrategy(stranger, ci.strategy.id, true)).rejects.toThrow(NotFoundError);
    await expect(m.memory.learnStrategy({ userId: stranger, description: 'x', fromConversationId: conv })).rejects.toThrow(NotFoundError);
    await expect(m.memory.learnStrategy({ userId, description: '', toolSequence: [] })).rejects.toThrow(ValidationError);
    expect((await m.memory.procedural.getStrategy(userId, ci.strategy.id))!.failureCount).toBe(1);
  });
});
