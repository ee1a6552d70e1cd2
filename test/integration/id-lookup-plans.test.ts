import { userScope } from '../../src/access';
import { Neo4jEpisodicStore } from '../../src/episodic';
import { Neo4jSemanticStore } from '../../src/semantic';
import { explainingRunner, openStack, uid, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(() => (stack = openStack()));
afterAll(() => stack.close());

/**
 * Statements that read nodes by id are planned by the real Neo4j (EXPLAIN, nothing runs): each
 * id is a unique-index seek, never an index scan filtered by id. `USING INDEX` alone let the
 * planner answer the hint with a scan of the whole id index per id whenever the channel list held
 * one channel (recall's default scope): hydration read 20 × every Turn in the database (100,000
 * index entries at 5,000 turns, 26-28 ms instead of 2), and the plan stayed cached.
 */
describe('reads by id seek the id index', () => {
  const plansOf = async (run: (plans: string[][]) => Promise<unknown>) => {
    const plans: string[][] = [];
    await run(plans);
    expect(plans.length).toBeGreaterThan(0);
    return plans;
  };
  const seeks = (plan: string[]) => {
    expect(plan.some((op) => op.startsWith('NodeUniqueIndexSeek'))).toBe(true);
    expect(plan.filter((op) => /Scan/.test(op))).toEqual([]);
  };
  const userId = uid('plans');
  // A recall's head: its size class of list parameters is the one found planned as a scan.
  const ids = Array.from({ length: 20 }, (_, i) => `${userId}-c:${i}`);

  it.each([[['_global']], [['_global', 'project']]])('turns hydrated by id, channels %j', async (channels) => {
    const plans = await plansOf((p) => new Neo4jEpisodicStore(explainingRunner(stack.driver, p)).getTurnsByIds(ids, userScope(userId, { channels }), {}));
    plans.forEach(seeks);
  });

  it('access counts of turns, facts and entities', async () => {
    const rows = ids.map((id) => ({ id, userId, n: 1, at: new Date().toISOString() }));
    const plans = await plansOf(async (p) => {
      await new Neo4jEpisodicStore(explainingRunner(stack.driver, p)).addAccessCounts(rows);
      const semantic = new Neo4jSemanticStore(explainingRunner(stack.driver, p), { heldVectors: 0 });
      await semantic.addAccessCounts('fact', rows);
      await semantic.addAccessCounts('entity', rows);
    });
    expect(plans).toHaveLength(3);
    plans.forEach(seeks);
  });
});
