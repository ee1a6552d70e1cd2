import { scopeKey, userScope } from '../../src/access';
import { luceneQuery, luceneTerms, luceneWords, scopedLuceneQuery } from '../../src/infra/fulltext-scope';

describe('scopedLuceneQuery', () => {
  it('requires one of the scope’s read keys (boost 0) and one of the terms', () => {
    const [k1, k2] = [scopeKey('u', 'default'), scopeKey('u', '_global')];
    expect(scopedLuceneQuery(userScope('u', { channels: ['default'] }), luceneTerms([{ term: 'garden' }, { term: 'fence', weight: 0.3 }]))).toBe(`+scope_key:(${k1} ${k2})^0 +(garden fence^0.3)`);
  });

  it('returns null without terms', () => {
    expect(scopedLuceneQuery(userScope('u'), luceneTerms([]))).toBeNull();
  });

  it('keeps query syntax out, so user text cannot change the query', () => {
    expect(luceneWords('a+b (c) "d" e:f OR g*')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(scopedLuceneQuery(userScope('u', { channels: ['default'] }), luceneTerms([{ term: 'x) OR scope_key:(other' }]))).toBe(
      `+scope_key:(${scopeKey('u', 'default')} ${scopeKey('u', '_global')})^0 +(x scope_key other)`,
    );
  });
});

describe('luceneQuery', () => {
  it('drops operators and syntax so user text cannot break or steer the query', () => {
    expect(luceneQuery('C++ (beta)? AND title:"x"')).toBe('C OR beta OR title OR x');
    expect(luceneQuery('   ')).toBe('');
    expect(luceneQuery('a a b')).toBe('a OR b');
    expect(luceneQuery('green OR tea')).toBe('green OR tea');
  });
});
