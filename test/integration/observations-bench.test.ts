import { existsSync } from 'node:fs';
import { learnFromLocomo } from '../../bench/locomo-consolidate';
import { loadLocomoObservations, turnRef } from '../../bench/locomo-observations';
import { scoreObservations } from '../../bench/observation-score';
import { defaultLocomoPath, loadLocomo } from '../../bench/recall-datasets';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { testConfig } from '../support/stack';

// LoCoMo is CC BY-NC and never in the repository: the shared data folder holds it on this machine.
const path = defaultLocomoPath();
const withLocomo = existsSync(path) ? describe : describe.skip;

let m: Mnemograph;
beforeAll(async () => {
  if (existsSync(path)) m = await createMnemograph(testConfig({ EMBEDDING_MODE: 'deferred', ERASURE_GRACE_MS: '0', LOG_LEVEL: 'silent' }), { backgroundEmbedding: false });
});
afterAll(async () => m?.close());

withLocomo('bench:observations on one LoCoMo conversation (conv-26)', () => {
  it('learns facts through the worker whose sources are turns of the conversation, none given to the other speaker, and scores them', async () => {
    const ds = loadLocomo(path);
    ds.conversations = ds.conversations.filter((c) => c.key === 'conv-26');
    const gold = loadLocomoObservations(path, new Set(['conv-26']));
    const learned = await learnFromLocomo(m, ds, 'a-user', false);
    expect(learned.turns).toBe(419);
    expect(learned.facts.length).toBeGreaterThan(0);
    for (const f of learned.facts) {
      expect(f.sources.length).toBeGreaterThan(0);
      for (const d of f.sources) expect(gold.turnSpeakers.has(turnRef('conv-26', d))).toBe(true);
    }
    const s = scoreObservations({ ...gold, facts: learned.facts, turns: learned.turns, pairLabels: [], precisionLabels: [], seed: 's', pairSample: 100, precisionSample: 150 });
    expect(s.coverage.overall.observations).toBe(184);
    expect(s.facts.wrongSpeaker).toBe(0);
    expect(s.precision).toMatchObject({ sampled: learned.facts.length, labelled: 0 });
    // The bench's users are erased afterwards.
    const left = await m.neo4j.read<{ n: number }>('MATCH (t:Turn) WHERE t.user_id STARTS WITH $run RETURN count(t) AS n', { run: `${learned.run}-` }, { subsystem: 'test', op: 'check' });
    expect(left[0]!.n).toBe(0);
  });
});
