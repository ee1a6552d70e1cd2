import { formatContext, type MemoryBundle, type RecalledItem } from '../../src/retrieval';
import { fuseHybrid, inTimeRange, temporalOf } from '../../src/retrieval/sources';

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('temporalOf', () => {
  const f = { temporal: 'current' as const, validFrom: '2024-01-01T00:00:00Z', validTo: null, status: 'active' as const };
  it('keeps the tag while the fact is inside its validity window', () => {
    expect(temporalOf(f, NOW)).toBe('current');
    expect(temporalOf({ ...f, temporal: 'past' }, NOW)).toBe('past');
  });
  it('makes a fact past once its window closed or it is no longer active, and future before it starts', () => {
    expect(temporalOf({ ...f, validTo: '2024-06-01T00:00:00Z' }, NOW)).toBe('past');
    expect(temporalOf({ ...f, status: 'superseded' }, NOW)).toBe('past');
    expect(temporalOf({ ...f, validFrom: '2025-06-01T00:00:00Z' }, NOW)).toBe('future');
  });
});

describe('fuseHybrid', () => {
  it('fuses by weighted RRF and reports each list\u2019s rank and raw score', () => {
    const ft = [
      { item: 'a', score: 3.2 },
      { item: 'b', score: 1.1 },
    ];
    const vec = [
      { item: 'b', score: 0.91 },
      { item: 'c', score: 0.8 },
    ];
    const out = fuseHybrid(ft, vec, (x) => x, { rrfK: 10, vectorWeight: 0.5, minVectorScore: 0 });
    // b: 1/12 + 0.5/11 = 0.1288 > a: 1/11 = 0.0909 > c: 0.5/12
    expect(out.map((o) => o.item)).toEqual(['b', 'a', 'c']);
    expect(out[0]!.signals).toEqual({ fulltext: { rank: 2, score: 1.1 }, vector: { rank: 1, score: 0.91 } });
    expect(out[2]!.signals).toEqual({ vector: { rank: 2, score: 0.8 } });
  });
  it('counts the vector list fully when full-text found nothing', () => {
    const out = fuseHybrid([], [{ item: 'x', score: 0.7 }], (x) => x, { rrfK: 10, vectorWeight: 0.5, minVectorScore: 0 });
    expect(out[0]!.score).toBeCloseTo(1 / 11);
  });
  it('drops what only the vector list found below the minimum score, not what a keyword found', () => {
    const ft = [{ item: 'a', score: 2 }];
    const vec = [
      { item: 'b', score: 0.8 },
      { item: 'a', score: 0.6 },
      { item: 'c', score: 0.6 },
    ];
    const out = fuseHybrid(ft, vec, (x) => x, { rrfK: 10, vectorWeight: 0.5, minVectorScore: 0.66 });
    expect(out.map((o) => o.item).sort()).toEqual(['a', 'b']);
    expect(out.find((o) => o.item === 'a')!.signals.vector).toEqual({ rank: 2, score: 0.6 });
  });
});

describe('inTimeRange', () => {
  it('is open without a range, and needs a timestamp inside it otherwise', () => {
    expect(inTimeRange(undefined, {})).toBe(true);
    expect(inTimeRange(null, { since: '2024-01-01T00:00:00Z' })).toBe(false);
    expect(inTimeRange('2024-03-01T00:00:00Z', { since: '2024-01-01T00:00:00Z', until: '2024-06-01T00:00:00Z' })).toBe(true);
    expect(inTimeRange('2024-07-01T00:00:00Z', { until: '2024-06-01T00:00:00Z' })).toBe(false);
  });
});

describe('formatContext for non-turn memories', () => {
  const item = (over: Partial<RecalledItem>): RecalledItem => ({ id: 'x', kind: 'fact', channel: '_global', text: 't', score: 1, relevance: 0.2, signals: {}, ...over });
  const bundle = (over: Partial<MemoryBundle>): MemoryBundle => ({
    query: 'q',
    userId: 'u',
    channels: ['_global'],
    turns: [],
    facts: [],
    entities: [],
    strategies: [],
    goals: [],
    pools: [],
    profile: null,
    degraded: [],
    timings: {},
    ...over,
  });

  it('marks past facts, goal urgency, strategy records and entity links, most relevant first', () => {
    const block = formatContext(
      bundle({
        facts: [
          item({ id: 'f1', text: 'Lives in Riga', temporal: 'past', relevance: 0.1, data: { predicate: 'lives_in', validTo: '2023-05-01T00:00:00Z' } }),
          item({ id: 'f2', text: 'Lives in Tallinn', temporal: 'current', relevance: 0.12, data: { predicate: 'lives_in', validFrom: '2023-05-01T00:00:00Z' } }),
          item({ id: 'f3', text: 'No longer works at Acme', temporal: 'past', relevance: 0.11, data: { predicate: 'works_at', ends: true, validTo: '2024-02-03T00:00:00Z' } }),
          item({ id: 'f4', text: 'Likes tea', temporal: 'current', relevance: 0.05, data: { predicate: 'likes' } }),
        ],
        entities: [item({ id: 'e1', kind: 'entity', text: 'Ada (person)', relevance: 0.3, related: [{ id: 'e2', text: 'Acme', relation: '-WORKS_FOR->' }] })],
        goals: [item({ id: 'g1', kind: 'goal', text: 'Ship v2', relevance: 0.2, data: { priority: 8, status: 'blocked', deadline: '2025-02-01T00:00:00Z' } })],
        strategies: [item({ id: 's1', kind: 'strategy', text: 'Bisect', relevance: 0.15, data: { toolSequence: ['git.log', 'git.bisect'], successRate: 0.75 } })],
      }),
    );
    expect(block.split('\n').slice(2, 10)).toEqual([
      '- [entity:e1] Ada (person) (related: -WORKS_FOR-> Acme)',
      '- [goal:g1] Ship v2 (priority 8, blocked, due 2025-02-01)',
      '- [strategy:s1] Bisect (tools: git.log → git.bisect, 75% success)',
      // The current value of something that changed says so; the past values carry their end.
      '- [fact:f2] Lives in Tallinn (current, since 2023-05-01)',
      '- [fact:f3] No longer works at Acme (past, ended 2024-02-03)',
      '- [fact:f1] Lives in Riga (past, until 2023-05-01)',
      '- [fact:f4] Likes tea',
      '</memory-context>',
    ]);
  });

  it('renders a profile alone, falling back to the narrative only when there are no keys', () => {
    expect(formatContext(bundle({ profile: { narrative: 'Likes tea.' } }))).toContain('- [profile] narrative: Likes tea.');
    const block = formatContext(bundle({ profile: { works_at: 'Acme', likes: ['tea', 'chess'], empty: [], narrative: 'Works at Acme.' } }));
    expect(block).toContain('- [profile] works at: Acme; likes: tea, chess');
    expect(block).not.toContain('Works at Acme.');
    expect(formatContext(bundle({ profile: {} }))).toBe('');
  });
});
