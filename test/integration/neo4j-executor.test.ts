import { MnemographError } from '../../src/errors';
import { openStack, uid, type TestStack } from '../support/stack';

let s: TestStack;
beforeAll(() => {
  s = openStack();
});
afterAll(async () => s.close());

describe('Neo4jExecutor reads', () => {
  it('run as one auto-commit transaction that still carries the subsystem and operation', async () => {
    const marker = uid('read');
    // The read sees itself among the running transactions: its metadata is the executor's tag.
    const rows = await s.neo4j.read<{ meta: Record<string, string> }>(
      `SHOW TRANSACTIONS YIELD metaData WHERE metaData.op = $marker RETURN metaData AS meta`,
      { marker },
      { subsystem: 'test', op: marker },
    );
    expect(rows).toEqual([{ meta: { app: 'mnemograph', subsystem: 'test', op: marker } }]);
  });

  it('return rows, and leave the process stack-trace limit as it was, on success and on failure', async () => {
    const limit = Error.stackTraceLimit;
    expect(await s.neo4j.read<{ n: number }>('UNWIND range(1, $k) AS n RETURN n', { k: 3 }, { subsystem: 'test', op: 'rows' })).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(Error.stackTraceLimit).toBe(limit);
    const failed = await s.neo4j.read('RETURN 1 +', {}, { subsystem: 'test', op: 'broken' }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(MnemographError);
    expect((failed as MnemographError).details).toMatchObject({ subsystem: 'test', op: 'broken' });
    expect((failed as MnemographError).message).toMatch(/Neo4j query failed/);
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it('refuse to write', async () => {
    const id = uid('never');
    await expect(s.neo4j.read('CREATE (:ExecutorProbe {id: $id})', { id }, { subsystem: 'test', op: 'write' })).rejects.toThrow();
    expect(await s.neo4j.read('MATCH (p:ExecutorProbe {id: $id}) RETURN count(p) AS n', { id }, { subsystem: 'test', op: 'count' })).toEqual([{ n: 0 }]);
  });
});
