import { isMerged, normPredicate, normSubject, objectsMatch, scoreCase, type Case } from '../../bench/knowledge-score';
import type { Fact } from '../../src/semantic/contract';

function fact(p: Partial<Fact> & { subject: string; predicate: string; object: string; polarity?: 'positive' | 'negative' }): Fact {
  const { subject, object, polarity, ...rest } = p;
  return {
    id: `f-${Math.random()}`,
    userId: 'u',
    channel: '_global',
    claim: `${subject} ${p.predicate} ${object}`,
    confidence: 0.9,
    certainty: 'explicit',
    source: 'test',
    sourceTurnId: null,
    connectionId: null,
    temporal: 'current',
    validFrom: '2024-01-01T00:00:00Z',
    validTo: null,
    status: 'active',
    protected: false,
    needsReview: false,
    salience: 1,
    accessCount: 0,
    lastAccessed: null,
    createdAt: '2024-01-01T00:00:00Z',
    aboutEntityIds: [],
    supersededBy: null,
    promotedFrom: null,
    embedded: true,
    ...rest,
    properties: { subject, object, polarity: polarity ?? 'positive' },
  };
}

describe('bench:knowledge normalisation', () => {
  it('folds subjects, predicates and objects as documented', () => {
    expect(normSubject('Dana', 'Dana')).toBe('user');
    expect(normSubject('my mom')).toBe("user's mother");
    expect(normSubject("user's husband")).toBe("user's spouse");
    expect(normPredicate('works for')).toBe('works_at');
    expect(normPredicate('girlfriend')).toBe('partner');
    expect(objectsMatch('Kraków', 'krakow')).toBe(true);
    expect(objectsMatch('data engineer', 'senior data engineer')).toBe(true);
    expect(objectsMatch('type 1 diabetes', 'diabetes')).toBe(false);
    expect(objectsMatch('visit parents', 'parents')).toBe(true);
    expect(objectsMatch('Feedzai', 'Revolut')).toBe(false);
    expect(isMerged('lisbon dana', ['lisbon', 'berlin', 'dana'])).toBe(true);
    expect(isMerged('tu delft', ['delft'])).toBe(false);
  });

  it('scores a change: the new value current, the old one past, and a stale value counted', () => {
    const c: Case = {
      id: 'x',
      category: 'changes',
      split: 'dev',
      turns: [],
      current: [['user', 'works_at', 'Revolut']],
      past: [['user', 'works_at', 'Feedzai']],
      updates: [['user', 'works_at', 'Revolut', 'Feedzai']],
      entities: ['Revolut', 'Feedzai'],
      why: '',
    };
    const right = scoreCase(c, {
      facts: [
        fact({ subject: 'user', predicate: 'works_at', object: 'Feedzai', status: 'superseded', validTo: '2024-02-01T00:00:00Z' }),
        fact({ subject: 'user', predicate: 'works_at', object: 'Revolut' }),
      ],
      entities: [
        { name: 'Revolut', aliases: [] },
        { name: 'Feedzai', aliases: [] },
        { name: 'user', aliases: [] },
      ],
    });
    expect(right.tally).toMatchObject({ tp: 1, fp: 0, fn: 0, pastFound: 1, updatesRight: 1, stale: 0, etp: 2, efp: 0 });
    const stale = scoreCase(c, { facts: [fact({ subject: 'user', predicate: 'works_at', object: 'Feedzai' })], entities: [{ name: 'Revolut Feedzai', aliases: [] }] });
    expect(stale.tally).toMatchObject({ tp: 0, fp: 1, fn: 1, updatesRight: 0, stale: 1, efp: 1, merged: 1 });
  });

  it('reads a negative like as a dislike and other negative facts as endings, not assertions', () => {
    const c: Case = { id: 'y', category: 'preferences', split: 'dev', turns: [], current: [['user', 'dislikes', 'jazz']], entities: [], why: '' };
    const s = scoreCase(c, {
      facts: [fact({ subject: 'user', predicate: 'likes', object: 'jazz', polarity: 'negative' }), fact({ subject: 'user', predicate: 'works_at', object: 'Acme', polarity: 'negative' })],
      entities: [],
    });
    expect(s.tally).toMatchObject({ tp: 1, fp: 0, negations: 1 });
  });
});
