import { mergeAliases, nameKeys, normalizeClaim, normalizeName, pickNameMatch, typesCompatible, belowThresholds } from '../../src/semantic';
import type { ResolutionCandidate } from '../../src/semantic/names';

describe('normalizeName', () => {
  it('folds case, accents, punctuation, spacing and a leading article', () => {
    expect(normalizeName('  José   García ')).toBe('jose garcia');
    expect(normalizeName('The Beatles')).toBe('beatles');
    expect(normalizeName("Alice's")).toBe(normalizeName('Alices'));
    expect(normalizeName('O.  Henry!')).toBe('o henry');
    expect(normalizeName('Витя')).toBe(normalizeName('витя'));
  });
  it('keeps different names apart (no stemming, no nickname guessing)', () => {
    expect(normalizeName('Vitya')).not.toBe(normalizeName('Vitaly'));
    expect(normalizeName('Ann')).not.toBe(normalizeName('Anna'));
    expect(normalizeName('The')).toBe('the');
  });
});

describe('aliases', () => {
  it('nameKeys dedupes keys, canonical name first', () => {
    expect(nameKeys('Vitaly', ['vitaly', 'Vitya', 'VITYA', 'my boss'])).toEqual(['vitaly', 'vitya', 'my boss']);
  });
  it('mergeAliases keeps order, drops the canonical name and duplicates by key', () => {
    expect(mergeAliases('Vitaly', ['Vitya'], ['vitya', 'Vitaly', 'my boss', ' My  Boss '])).toEqual(['Vitya', 'my boss']);
  });
});

describe('pickNameMatch', () => {
  const c = (id: string, type: string, names: string[], extra: Partial<ResolutionCandidate> = {}): ResolutionCandidate => ({
    id,
    type,
    normalizedName: names[0]!,
    normalizedNames: names,
    salience: 0.5,
    mentionCount: 1,
    sameChannel: true,
    ...extra,
  });
  it('matches by alias and reports how', () => {
    expect(pickNameMatch(['vitya'], 'person', [c('a', 'person', ['vitaly', 'vitya'])])).toEqual({ id: 'a', matchedBy: 'alias' });
    expect(pickNameMatch(['my boss', 'vitaly'], 'person', [c('a', 'person', ['vitaly', 'vitya'])])).toEqual({ id: 'a', matchedBy: 'name' });
  });
  it('never merges incompatible types; "other" matches anything', () => {
    expect(pickNameMatch(['apple'], 'organization', [c('fruit', 'concept', ['apple'])])).toBeNull();
    expect(pickNameMatch(['apple'], 'other', [c('fruit', 'concept', ['apple'])])).toEqual({ id: 'fruit', matchedBy: 'name' });
    expect(typesCompatible('other', 'person')).toBe(true);
    expect(typesCompatible('place', 'person')).toBe(false);
  });
  it('prefers a canonical-name match over an alias match, then exact type, then channel', () => {
    const byAlias = c('alias', 'person', ['alexander', 'alex']);
    const byName = c('name', 'person', ['alex']);
    expect(pickNameMatch(['alex'], 'person', [byAlias, byName])!.id).toBe('name');
    const other = c('o', 'other', ['sam']);
    const person = c('p', 'person', ['sam']);
    expect(pickNameMatch(['sam'], 'person', [other, person])!.id).toBe('p');
    const global = c('g', 'person', ['kim'], { sameChannel: false, mentionCount: 9 });
    const local = c('l', 'person', ['kim']);
    expect(pickNameMatch(['kim'], 'person', [global, local])!.id).toBe('l');
  });
  it('returns null without a shared key', () => {
    expect(pickNameMatch(['vitaly petrov'], 'person', [c('a', 'person', ['vitaly ivanov', 'vitaly'])])).toBeNull();
  });
});

describe('normalizeClaim', () => {
  it('folds case, spacing and end punctuation only', () => {
    expect(normalizeClaim('Alice  works at ACME.')).toBe(normalizeClaim('alice works at acme'));
    expect(normalizeClaim('Alice works at ACME')).not.toBe(normalizeClaim('Alice worked at ACME'));
  });
});

describe('belowThresholds', () => {
  const t = { minConfidence: 0.85, minAccessCount: 5, minConversations: 2 };
  it('lists every threshold a fact misses and none when it passes all', () => {
    expect(belowThresholds({ confidence: 0.9, accessCount: 5, conversationCount: 2 }, t)).toEqual([]);
    expect(belowThresholds({ confidence: 0.8, accessCount: 4, conversationCount: 1 }, t)).toHaveLength(3);
    expect(belowThresholds({ confidence: 0.85, accessCount: 5, conversationCount: 1 }, t)).toEqual(['conversations 1 < 2']);
  });
});
