import { runLifetime, optionsFrom, summary } from '../../bench/lifetime';
import { SURFACES } from '../../bench/lifetime-probe';
import { FakeClock } from '../../bench/lifetime-year';
import { startServer, type RunningServer } from '../../src/api/server';
import { createMnemograph, type Mnemograph } from '../../src/container';
import { mountMcp } from '../../src/mcp/http';
import { testConfig } from '../support/stack';

// bench:lifetime's short form, smaller still: one LoCoMo conversation of two sessions, a
// 30-day year with the hourly jobs once a day, a few deletions. It checks the result is
// well-formed and its counts add up, never the quality goals (those are the bench's figures).
let m: Mnemograph;
let srv: RunningServer;
const clock = new FakeClock(new Date());
beforeAll(async () => {
  m = await createMnemograph(testConfig({ EMBEDDING_MODE: 'inline', LOG_LEVEL: 'silent', API_RATE_LIMIT_PER_MINUTE: '1000000' }), { backgroundEmbedding: false, clock });
  srv = await startServer(m, { port: 0, host: '127.0.0.1', mount: mountMcp, warmUp: false });
});
afterAll(async () => {
  await srv.close();
  await m.close();
});

type Counts = Record<(typeof SURFACES)[number], number>;
const sum = (c: Counts) => Object.values(c).reduce((a, b) => a + b, 0);

describe('bench:lifetime, short form', () => {
  it('runs the year and the deletion pass and reports consistent counts', async () => {
    const o = { ...optionsFrom({ short: true, tickHours: '24', depth: '50', scale: '', longmemeval: '' }), conversations: 1, sessions: 2, questions: { locomo: 8 }, quiet: true };
    o.deletion = { turns: 3, conversations: 1, facts: 2, survivors: 3, topK: 10 };
    const r = (await runLifetime(m, srv, clock, o)) as any;

    const locomo = r.recall.locomo;
    for (const when of ['before', 'after']) {
      expect(locomo[when].overall.n).toBeGreaterThan(0);
      for (const k of ['turn_recall_at_10', 'session_recall_at_10']) expect(locomo[when].overall[k]).toBeGreaterThanOrEqual(0);
    }
    expect(locomo.difference.turn_recall_at_10).toBeCloseTo(locomo.after.overall.turn_recall_at_10 - locomo.before.overall.turn_recall_at_10, 3);
    expect(typeof locomo.goal_met.turn_recall_at_10).toBe('boolean');

    // Every scheduled job ran at its cadence: daily ones 30 times, hourly ones (every 24 hours here) too.
    expect(r.year.days).toBe(30);
    const runs = Object.values(r.year.jobs as Record<string, { runs: number; failed: number }>);
    expect(runs.reduce((n, j) => n + j.runs, 0)).toBe(r.year.job_runs);
    expect(r.year.jobs.decay.runs).toBe(30);
    expect(r.year.jobs.promote.runs).toBe(30);
    expect(runs.every((j) => j.failed === 0)).toBe(true);
    for (const when of ['before', 'after']) {
      const c = r.memory[when];
      expect(c.turns).toBe(r.setup.datasets[0].turns);
      expect(c.factsActive).toBeLessThanOrEqual(c.factsAll);
      expect(c.entitiesActive).toBeLessThanOrEqual(c.entitiesAll);
      expect(c.turnsArchived).toBeLessThanOrEqual(c.turns);
    }

    const d = r.deletion;
    expect(d.deleted).toMatchObject({ turns: 3, conversations: 1, facts_retracted: 2 });
    const deletedItems = d.deleted.turns + d.deleted.conversations + d.deleted.conversation_turns + d.deleted.facts_retracted + d.deleted.facts_learned_only_from_deleted;
    expect(d.leaks.items).toBe(deletedItems);
    expect(d.leaks.items_leaked).toBeLessThanOrEqual(d.leaks.items);
    expect(d.leaks.total).toBe(sum(d.leaks.per_surface));
    const kinds = Object.values(d.leaks.by_kind as Record<string, { items: number; leaked: number }>);
    expect(kinds.reduce((n, k) => n + k.items, 0)).toBe(d.leaks.items);
    expect(kinds.reduce((n, k) => n + k.leaked, 0)).toBe(d.leaks.items_leaked);
    expect(d.wrong_removals.total).toBe(sum(d.wrong_removals.per_surface));
    for (const s of SURFACES) expect(d.wrong_removals.per_surface[s]).toBeLessThanOrEqual(d.wrong_removals.found_before[s]);
    // Every deleted item and survivor was in its user's export before the deletions.
    expect(d.found_before_deletion.per_surface.export).toBe(d.leaks.items);
    expect(d.wrong_removals.found_before.export).toBe(d.wrong_removals.items);
    expect(d.delete_ms.turn.n).toBe(3);
    expect(r.scale).toEqual({ skipped: true });
    expect(summary(r)).toContain('locomo turn_recall_at_10');

    // The bench's users are gone afterwards.
    const left = await m.neo4j.read<{ n: number }>('MATCH (t:Turn) WHERE t.user_id STARTS WITH $p RETURN count(t) AS n', { p: `${r.setup.tenant}.` }, { subsystem: 'test', op: 'check' });
    expect(left[0]!.n).toBe(0);
    // ~25 s on a warm stack; a Neo4j just started (its JIT cold) takes over a minute.
  }, 180_000);
});
