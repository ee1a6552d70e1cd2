import { adjustImportance, canAdmin, canRead, canWrite, effectiveRelevance, minStaleAgeDays, staleness } from '../../src/pools';
import { check } from '../../src/pools/access';

const DAY = 86_400_000;
const now = Date.parse('2025-06-01T00:00:00Z');
const at = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();

describe('pool access rules', () => {
  const pool = { ownerAgent: 'owner', access: { read: ['r'], write: ['w'], publicRead: false } };
  it('owner and admin (no agent) do everything; write implies read; others see nothing', () => {
    expect([canRead(pool, { agentId: 'owner' }), canWrite(pool, { agentId: 'owner' }), canAdmin(pool, { agentId: 'owner' })]).toEqual([true, true, true]);
    expect([canRead(pool, { agentId: null }), canWrite(pool, { agentId: null }), canAdmin(pool, { agentId: null })]).toEqual([true, true, true]);
    expect(check(pool, { agentId: 'r' }, 'write')).toBe('forbidden');
    expect(check(pool, { agentId: 'w' }, 'write')).toBe('ok');
    expect(check(pool, { agentId: 'w' }, 'admin')).toBe('forbidden');
    expect(check(pool, { agentId: 'x' }, 'read')).toBe('hidden');
    expect(check({ ...pool, access: { ...pool.access, publicRead: true } }, { agentId: 'x' }, 'read')).toBe('ok');
    expect(check({ ...pool, access: { ...pool.access, publicRead: true } }, { agentId: 'x' }, 'write')).toBe('forbidden');
  });
});

describe('effective relevance and staleness', () => {
  const entry = (o: Partial<{ importance: number; confidence: number; updatedAt: string; lastAccessedAt: string | null; expiresAt: string | null }>) => ({
    importance: 0.5,
    confidence: 0.8,
    updatedAt: at(0),
    lastAccessedAt: null,
    expiresAt: null,
    ...o,
  });
  it('weighs importance, confidence and recency 0.5 / 0.3 / 0.2', () => {
    expect(effectiveRelevance(entry({ importance: 1, confidence: 1 }), now)).toBe(1);
    expect(effectiveRelevance(entry({}), now)).toBeCloseTo(0.25 + 0.24 + 0.2, 6);
    expect(effectiveRelevance(entry({ updatedAt: at(30) }), now)).toBeCloseTo(0.25 + 0.24 + 0.1, 6);
    expect(effectiveRelevance(entry({ updatedAt: at(300), lastAccessedAt: at(0) }), now)).toBeCloseTo(0.69, 6);
  });
  it('grows with age since the last access, slower for important entries; an expired entry is stale', () => {
    expect(staleness(entry({}), now)).toBe(0);
    expect(staleness(entry({ updatedAt: at(100) }), now)).toBeGreaterThan(0.89);
    expect(staleness(entry({ updatedAt: at(60) }), now)).toBeLessThan(0.9);
    expect(staleness(entry({ updatedAt: at(100), importance: 1 }), now)).toBeLessThan(staleness(entry({ updatedAt: at(100), importance: 0 }), now));
    expect(staleness(entry({ updatedAt: at(200), lastAccessedAt: at(1) }), now)).toBeLessThan(0.1);
    expect(staleness(entry({ expiresAt: at(1) }), now)).toBe(1);
  });
  it('reads only entries old enough to pass the threshold at importance 0', () => {
    const days = minStaleAgeDays(0.9, 30);
    expect(days).toBeCloseTo(71.9, 0);
    expect(staleness(entry({ importance: 0, updatedAt: at(days - 1) }), now)).toBeLessThan(0.9);
    expect(staleness(entry({ importance: 0, updatedAt: at(days + 1) }), now)).toBeGreaterThanOrEqual(0.9);
  });
  it('boost and reduce stay within 0..1', () => {
    expect(adjustImportance(0.95, 'boost', 0.1)).toBe(1);
    expect(adjustImportance(0.05, 'reduce', 0.1)).toBe(0);
    expect(adjustImportance(0.5, 'boost', 0.2)).toBe(0.7);
  });
});
