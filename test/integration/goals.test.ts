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

describe('goals', () => {
  it('adds goals with sub-goals and blockers, completes them, and unblocks waiting goals', async () => {
    const userId = uid('u');
    const launch = (await m.memory.addGoal({ userId, description: 'Launch the website', priority: 8, deadline: '2030-01-01T00:00:00Z' })).goal;
    expect(launch).toMatchObject({ status: 'active', priority: 8, parentId: null, completedAt: null, result: null });
    expect(await count('MATCH (:User {id: $u})-[:HAS_GOAL]->(g:Goal {id: $g}) RETURN count(g) AS n', { u: userId, g: launch.id })).toBe(1);

    const design = (await m.memory.addGoal({ userId, description: 'Finish the design', parentId: launch.id, priority: 6 })).goal;
    const deploy = (await m.memory.addGoal({ userId, description: 'Deploy to production', parentId: launch.id, blockedBy: [design.id] })).goal;
    expect(deploy.status).toBe('blocked');

    const details = await m.memory.getGoal(userId, launch.id);
    expect(details!.goal.id).toBe(launch.id);
    expect(details!.subgoals.map((g) => g.id)).toEqual([design.id, deploy.id]);
    const child = await m.memory.getGoal(userId, deploy.id);
    expect(child!.parent!.id).toBe(launch.id);
    expect(child!.goal.parentId).toBe(launch.id);
    expect(child!.blockedBy.map((g) => g.id)).toEqual([design.id]);
    expect((await m.memory.getGoal(userId, design.id))!.blocks.map((g) => g.id)).toEqual([deploy.id]);

    const done = await m.memory.completeGoal({ userId, goalId: design.id, result: 'Figma file approved' });
    expect(done.goal).toMatchObject({ status: 'completed', result: 'Figma file approved' });
    expect(done.goal.completedAt).not.toBeNull();
    expect(done.unblocked).toEqual([deploy.id]);
    expect((await m.memory.getGoal(userId, deploy.id))!.goal.status).toBe('active');

    // Same status again is a no-op; another closed status is refused.
    expect((await m.memory.completeGoal({ userId, goalId: design.id })).unblocked).toEqual([]);
    await expect(m.memory.completeGoal({ userId, goalId: design.id, status: 'abandoned' })).rejects.toThrow(ValidationError);
    const failed = await m.memory.completeGoal({ userId, goalId: deploy.id, status: 'failed', result: 'quota exceeded' });
    expect(failed.goal.status).toBe('failed');
  });

  it('lists open goals per user and channel, by priority then deadline', async () => {
    const userId = uid('u');
    const add = (description: string, priority: number, channel = '_global', deadline?: string) => m.memory.addGoal({ userId, channel, description, priority, deadline });
    const low = (await add('low', 2)).goal;
    const highLate = (await add('high late', 9, '_global', '2031-01-01T00:00:00Z')).goal;
    const highSoon = (await add('high soon', 9, '_global', '2030-01-01T00:00:00Z')).goal;
    const project = (await add('project goal', 5, 'proj-a')).goal;
    const closed = (await add('closed', 10)).goal;
    await m.memory.completeGoal({ userId, goalId: closed.id });
    const blocked = (await m.memory.addGoal({ userId, description: 'blocked', priority: 1, blockedBy: [low.id] })).goal;

    expect((await m.memory.listActiveGoals({ userId })).map((g) => g.id)).toEqual([highSoon.id, highLate.id, low.id, blocked.id]);
    expect((await m.memory.listActiveGoals({ userId, channels: ['proj-a'] })).map((g) => g.id)).toEqual([highSoon.id, highLate.id, project.id, low.id, blocked.id]);
    expect((await m.memory.listActiveGoals({ userId, includeBlocked: false, limit: 2 })).map((g) => g.id)).toEqual([highSoon.id, highLate.id]);
    expect(await m.memory.listActiveGoals({ userId: uid('u') })).toEqual([]);
  });

  it('keeps blockers acyclic and goals of other users out of reach', async () => {
    const [userId, intruder] = [uid('u'), uid('intruder')];
    const a = (await m.memory.addGoal({ userId, description: 'A' })).goal;
    const b = (await m.memory.addGoal({ userId, description: 'B', blockedBy: [a.id] })).goal;
    await expect(m.memory.goals.addBlocker(userId, a.id, b.id)).rejects.toThrow(ValidationError);
    await expect(m.memory.goals.addBlocker(userId, a.id, a.id)).rejects.toThrow(ValidationError);
    const c = (await m.memory.addGoal({ userId, description: 'C' })).goal;
    expect((await m.memory.goals.addBlocker(userId, c.id, b.id)).status).toBe('blocked');

    expect(await m.memory.getGoal(intruder, a.id)).toBeNull();
    await expect(m.memory.completeGoal({ userId: intruder, goalId: a.id })).rejects.toThrow(NotFoundError);
    await expect(m.memory.addGoal({ userId: intruder, description: 'sneaky', parentId: a.id })).rejects.toThrow(NotFoundError);
    await expect(m.memory.addGoal({ userId: intruder, description: 'sneaky', blockedBy: [b.id] })).rejects.toThrow(NotFoundError);
    await expect(m.memory.addGoal({ userId: intruder, id: a.id, description: 'same id' })).rejects.toThrow(ValidationError);
    expect(await count('MATCH (g:Goal) WHERE g.user_id = $u RETURN count(g) AS n', { u: intruder })).toBe(0);
    expect((await m.memory.getGoal(userId, a.id))!.goal.status).toBe('active');
  });

  it('rejects bad input before writing and is idempotent on a caller-chosen id', async () => {
    const userId = uid('u');
    for (const input of [
      { userId, description: '' },
      { userId, description: 'x', priority: 11 },
      { userId, description: 'x', deadline: 'tomorrow' },
      { userId, description: 'x', parentId: 'bad id!' },
      { userId, description: 'x', status: 'active' },
    ]) {
      await expect(m.memory.addGoal(input as Parameters<typeof m.memory.addGoal>[0])).rejects.toThrow(ValidationError);
    }
    await expect(m.memory.completeGoal({ userId, goalId: 'g1', status: 'blocked' as 'failed' })).rejects.toThrow(ValidationError);
    expect(await count('MATCH (g:Goal) WHERE g.user_id = $u RETURN count(g) AS n', { u: userId })).toBe(0);
    const id = uid('g');
    expect((await m.memory.addGoal({ userId, id, description: 'once' })).created).toBe(true);
    expect((await m.memory.addGoal({ userId, id, description: 'once' })).created).toBe(false);
    expect(await count('MATCH (g:Goal) WHERE g.user_id = $u RETURN count(g) AS n', { u: userId })).toBe(1);
  });
});
