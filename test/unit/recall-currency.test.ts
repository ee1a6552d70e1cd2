import { changeTurns, liftChangeTurns, preferCurrent, questionTense } from '../../src/retrieval/currency';
import type { RecalledItem, RecalledTurn } from '../../src/retrieval';

const fact = (id: string, temporal: 'current' | 'past', relevance: number, data: Record<string, unknown>): RecalledItem => ({
  id,
  kind: 'fact',
  channel: '_global',
  text: id,
  score: 1,
  relevance,
  temporal,
  signals: {},
  data,
});
const turn = (id: string, score: number): RecalledTurn => ({
  turn: { id, userId: 'u', channel: '_global', conversationId: 'c', index: 0, role: 'user', content: id, timestamp: '2024-01-01T00:00:00Z', tokenCount: 1, metadata: {}, embedded: true },
  score,
  signals: {},
});

describe('questionTense', () => {
  it.each([
    ['where does Dana work?', 'present'],
    ['Where does she live now?', 'present'],
    ['Is Dana still at Feedzai?', 'present'],
    ['where did Dana work before Revolut?', 'past'],
    ['Where did she used to live?', 'past'],
    ['Which company was Dana at last year?', 'past'],
    ['Dana employer', 'neutral'],
  ])('%s -> %s', (q, tense) => expect(questionTense(q)).toBe(tense));
});

describe('preferCurrent', () => {
  // The past value matched the question's words better: alone, it would come first.
  const facts = [
    fact('feedzai-ended', 'past', 0.9, { predicate: 'works_at', ends: true }),
    fact('revolut', 'current', 0.6, { predicate: 'works_at' }),
    fact('berlin', 'past', 0.8, { predicate: 'lives_in' }),
  ];

  it('keeps a past value below the current value of its predicate for a present question', () => {
    const out = preferCurrent(facts, 'present');
    expect(out.map((f) => f.id)).toEqual(['berlin', 'revolut', 'feedzai-ended']);
    expect(out[2]!.relevance).toBeCloseTo(0.54, 6);
    expect(out[2]!.signals.current?.note).toBe('below current revolut');
    // Berlin has no current lives_in here: nothing to yield to.
    expect(out[0]!.relevance).toBe(0.8);
  });

  it('changes nothing for a question about the past', () => {
    expect(preferCurrent(facts, 'past')).toBe(facts);
  });
});

describe('liftChangeTurns', () => {
  const facts = [
    fact('revolut', 'current', 0.9, { predicate: 'works_at', sourceTurnId: 't5' }),
    fact('feedzai-ended', 'past', 0.5, { predicate: 'works_at', ends: true, sourceTurnId: 't5' }),
    fact('feedzai', 'past', 0.4, { predicate: 'works_at', status: 'superseded', sourceTurnId: 't2' }),
    fact('tea', 'current', 0.3, { predicate: 'likes', sourceTurnId: 't9' }),
  ];

  it('finds the turn that changed a fact and the turn that said the old value', () => {
    const { changed, stale } = changeTurns(facts);
    expect([...changed]).toEqual(['t5']);
    expect([...stale]).toEqual(['t2']);
  });

  it('ranks the change turn above the stale one, bringing it in when the turn search missed it, within topK', () => {
    const turns = [turn('t0', 1), turn('t2', 0.9), turn('t1', 0.5), turn('t3', 0.2)];
    const out = liftChangeTurns(turns, facts, [turn('t5', 0).turn], 4);
    // t5 takes t3's place (the weakest); the stale t2 is halved below t1.
    expect(out.map((t) => t.turn.id)).toEqual(['t0', 't5', 't1', 't2']);
    expect(out[1]!.score).toBeCloseTo(0.909, 6);
    expect(out[1]!.signals.changed?.note).toBe('said the current value');
    expect(out[3]!).toMatchObject({ score: 0.45, signals: { stale: { note: 'said a superseded value', score: 0.5 } } });
  });

  it('lifts a change turn already there above the stale turn', () => {
    const out = liftChangeTurns([turn('t2', 0.9), turn('t5', 0.1)], facts, [], 5);
    expect(out.map((t) => t.turn.id)).toEqual(['t5', 't2']);
  });

  it('leaves the turns alone when no recalled fact records a change', () => {
    const turns = [turn('t0', 1), turn('t1', 0.5)];
    expect(liftChangeTurns(turns, [facts[3]!], [turn('t5', 0).turn], 2)).toBe(turns);
  });
});
