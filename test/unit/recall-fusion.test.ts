import { capPerGroup, recencyScore, smoothNeighbours, weightedRrf, weightedScoreFusion } from '../../src/retrieval/fusion';
import { rankedIndexes } from '../../src/retrieval/rerank';

describe('weightedRrf', () => {
  it('adds weight / (k + rank) per list, so agreement beats a single top rank', () => {
    const fused = weightedRrf(
      [
        { signal: 'fulltext', weight: 1, ids: ['a', 'b', 'c'] },
        { signal: 'vector', weight: 1, ids: ['b', 'c', 'd'] },
      ],
      60,
    );
    expect(fused.map((f) => f.id)).toEqual(['b', 'c', 'a', 'd']);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 10);
    expect(fused[0]!.ranks).toEqual({ fulltext: 2, vector: 1 });
    expect(fused.find((f) => f.id === 'a')!.ranks).toEqual({ fulltext: 1 });
  });

  it('lets a down-weighted list break ties without out-voting the stronger one', () => {
    const fused = weightedRrf(
      [
        { signal: 'fulltext', weight: 1, ids: ['a', 'b'] },
        { signal: 'vector', weight: 0.2, ids: ['b', 'x'] },
      ],
      1,
    );
    // a: 1/2 = 0.5; b: 1/3 + 0.2/2 = 0.433; x: 0.2/3
    expect(fused.map((f) => f.id)).toEqual(['a', 'b', 'x']);
  });

  it('ignores lists with weight 0 and counts an id once per list', () => {
    const fused = weightedRrf(
      [
        { signal: 'fulltext', weight: 1, ids: ['a', 'a', 'b'] },
        { signal: 'vector', weight: 0, ids: ['z'] },
      ],
      60,
    );
    expect(fused.map((f) => f.id)).toEqual(['a', 'b']);
    expect(fused[1]!.ranks).toEqual({ fulltext: 3 });
  });
});

describe('weightedScoreFusion', () => {
  it('sums min-max-normalised scores, keeping how far ahead the top hit is', () => {
    const fused = weightedScoreFusion([
      {
        signal: 'fulltext',
        weight: 1,
        items: [
          { id: 'a', score: 12 },
          { id: 'b', score: 3 },
          { id: 'c', score: 2 },
        ],
      },
      {
        signal: 'vector',
        weight: 0.5,
        items: [
          { id: 'c', score: 0.9 },
          { id: 'b', score: 0.85 },
          { id: 'd', score: 0.8 },
        ],
      },
    ]);
    // a: 1; b: 0.1 + 0.5 * 0.5 = 0.35; c: 0 + 0.5 = 0.5; d: 0
    expect(fused.map((f) => f.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[1]!.score).toBeCloseTo(0.5);
    expect(fused[2]!.score).toBeCloseTo(0.35);
    expect(fused[2]!.ranks).toEqual({ fulltext: 2, vector: 2 });
  });

  it('gives a single hit, and hits that all tie, the full weight', () => {
    expect(weightedScoreFusion([{ signal: 'fulltext', weight: 1, items: [{ id: 'a', score: 4 }] }])[0]!.score).toBe(1);
    const tied = weightedScoreFusion([
      {
        signal: 'fulltext',
        weight: 1,
        items: [
          { id: 'a', score: 2 },
          { id: 'b', score: 2 },
        ],
      },
      {
        signal: 'vector',
        weight: 1,
        items: [
          { id: 'a', score: 0.9 },
          { id: 'b', score: 0.8 },
        ],
      },
    ]);
    expect(tied.map((f) => [f.id, f.score])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });
});

describe('smoothNeighbours', () => {
  const pos = (id: string) => ({ conversationId: id.split(':')[0]!, index: Number(id.split(':')[1]) });
  const idAt = (p: { conversationId: string; index: number }) => `${p.conversationId}:${p.index}`;
  const positions = (scores: Map<string, number>) => new Map([...scores.keys()].map((id) => [id, pos(id)]));

  it('adds weight(d) times the score of every matched turn within the window, and brings in unseen neighbours', () => {
    const scores = new Map([
      ['c:1', 1],
      ['c:3', 0.4],
      ['d:0', 0.5],
    ]);
    const out = smoothNeighbours(scores, positions(scores), idAt, [0.5, 0.25]);
    expect(out.get('c:1')!.score).toBeCloseTo(1 + 0.25 * 0.4); // c:3 is two steps away
    expect(out.get('c:1')!.from).toBe('c:3');
    expect(out.get('c:2')!.score).toBeCloseTo(0.5 * 1 + 0.5 * 0.4);
    expect(out.get('c:2')!.from).toBe('c:1'); // the larger contribution
    expect(out.get('c:0')!.score).toBeCloseTo(0.5);
    expect(out.get('c:5')!.score).toBeCloseTo(0.25 * 0.4);
    expect(out.get('d:1')).toEqual({ score: 0.25, from: 'd:0' });
    expect(out.get('d:2')).toEqual({ score: 0.125, from: 'd:0' });
    expect(out.has('d:-1')).toBe(false);
    expect(out.has('c:6')).toBe(false); // outside the window
  });

  it('ranks an answer right after a strong match above a weak match of its own', () => {
    const scores = new Map([
      ['c:4', 1], // "What did you paint last weekend?"
      ['x:9', 0.3], // a weak keyword hit elsewhere
    ]);
    const out = smoothNeighbours(scores, positions(scores), idAt, [0.5]);
    expect(out.get('c:5')!.score).toBeGreaterThan(out.get('x:9')!.score);
  });

  it('lets the direction and the source turn scale what passes (a question gives more to its reply)', () => {
    const scores = new Map([['c:4', 1]]);
    const pass = (from: string, d: number) => (d < 0 ? 0.6 : from === 'c:4' ? 2 : 1);
    const out = smoothNeighbours(scores, positions(scores), idAt, [0.5, 0.25], pass);
    expect(out.get('c:5')!.score).toBeCloseTo(0.5 * 2);
    expect(out.get('c:6')!.score).toBeCloseTo(0.25 * 2);
    expect(out.get('c:3')!.score).toBeCloseTo(0.5 * 0.6);
    expect(out.get('c:2')!.score).toBeCloseTo(0.25 * 0.6);
    expect(out.get('c:4')!.score).toBe(1);
  });

  it('is the identity without a window', () => {
    const scores = new Map([['c:1', 1]]);
    expect([...smoothNeighbours(scores, positions(scores), idAt, [])]).toEqual([['c:1', { score: 1 }]]);
  });
});

describe('capPerGroup', () => {
  it('moves items over the per-group cap behind the others, keeping order', () => {
    const items = ['a1', 'a2', 'a3', 'b1', 'a4', 'c1'];
    expect(capPerGroup(items, (s) => s[0]!, 2)).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
    expect(capPerGroup(items, (s) => s[0]!, 0)).toEqual(items);
  });
});

describe('recencyScore', () => {
  it('halves every half-life', () => {
    const day = 86_400_000;
    expect(recencyScore(10 * day, 10 * day, 30 * day)).toBe(1);
    expect(recencyScore(0, 30 * day, 30 * day)).toBeCloseTo(0.5);
    expect(recencyScore(0, 60 * day, 30 * day)).toBeCloseTo(0.25);
    expect(recencyScore(20 * day, 10 * day, 30 * day)).toBe(1); // future timestamps are not boosted above 1
  });
});

describe('rankedIndexes (LLM reranker answers)', () => {
  it('reads the distinct candidate numbers in order and ignores the rest', () => {
    expect(rankedIndexes('3, 1, 3, 9, 0', 4)).toEqual([2, 0]);
    expect(rankedIndexes('[2] is best, then [4]', 4)).toEqual([1, 3]);
    expect(rankedIndexes('none of them', 4)).toEqual([]);
  });
});
