import { resolve } from 'node:path';
import { runRecall } from '../../bench/recall';
import { loadLongMemEval } from '../../bench/recall-datasets';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { testConfig } from '../support/stack';

let m: Mnemograph;
beforeAll(async () => {
  m = await createMnemograph(testConfig({ EMBEDDING_MODE: 'inline', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m.close());

describe('bench:recall on a LongMemEval-format fixture', () => {
  it('ingests, asks every question through remember() for each system, scores, and cleans up', async () => {
    const ds = loadLongMemEval(resolve(__dirname, '../fixtures/longmemeval-mini.json'));
    const r = await runRecall(m, ds, { systems: ['hybrid', 'bm25', 'vector'], depth: 20, keep: false, quiet: true });
    expect(Object.keys(r.systems)).toEqual(['hybrid', 'bm25', 'vector']);
    const hybrid = r.systems.hybrid!;
    expect(hybrid.overall).toMatchObject({ n: 2, hit_at_10: 1, session_any_at_5: 1 });
    expect(hybrid.overall.turn_recall_at_10).toBe(1);
    expect(Object.keys(hybrid.by_category).sort()).toEqual(['single-session-user', 'temporal-reasoning']);
    expect((hybrid.overall.remember_ms as { p95: number }).p95).toBeGreaterThan(0);
    expect(r.published_protocol).toBeUndefined();
    // The benchmark's users are gone afterwards.
    const left = await m.neo4j.read<{ n: number }>('MATCH (t:Turn) WHERE t.user_id STARTS WITH $run RETURN count(t) AS n', { run: `${String(r.setup.run)}-` }, { subsystem: 'test', op: 'check' });
    expect(left[0]!.n).toBe(0);
  });
});
