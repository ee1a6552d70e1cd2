import { mergeProfile, renderNarrative, NARRATIVE_MAX_WORDS } from '../../src/observations/profile';
import { observationAsFirstPerson } from '../../src/worker/jobs/consolidate';
import { contextPatternOf, toolSequenceOf } from '../../src/worker/jobs/patterns';
import { sameStatement } from '../../src/worker/jobs/cleanup';

describe('profile', () => {
  const f = (relation: string, object: string, o: Partial<{ polarity: 'positive' | 'negative'; singleValued: boolean; temporal: 'current' | 'past' | 'future' }> = {}) => ({
    claim: `user ${relation} ${object}`,
    relation,
    object,
    polarity: o.polarity ?? 'positive',
    singleValued: o.singleValued ?? false,
    temporal: o.temporal ?? 'current',
  });

  it('takes an ended value out of the profile and records the change', () => {
    const ended = { ...f('works_at', 'Feedzai', { singleValued: true, temporal: 'past' }), claim: 'user no longer works at Feedzai', ends: true };
    expect(mergeProfile({ works_at: 'Feedzai', pet: ['Tofu', 'Rex'] }, [ended, { ...f('pet', 'Tofu', { temporal: 'past' }), claim: "user's pet Tofu died", ends: true }])).toEqual({
      pet: ['Rex'],
      history: ['user no longer works at Feedzai', "user's pet Tofu died"],
    });
    // An ending about another value leaves the current one alone.
    expect(mergeProfile({ works_at: 'Revolut' }, [ended])).toMatchObject({ works_at: 'Revolut' });
  });

  it('sets single values, accumulates lists, moves negatives, keeps history and plans', () => {
    let p = mergeProfile({ works_at: 'Google', likes: '["tea"]' }, [f('works_at', 'Microsoft', { singleValued: true }), f('likes', 'coffee')]);
    expect(p).toEqual({ works_at: 'Microsoft', likes: ['tea', 'coffee'] });
    p = mergeProfile(
      p,
      [f('likes', 'tea', { polarity: 'negative' }), f('lives_in', 'Oslo', { temporal: 'past' }), f('works_at', 'Stripe', { temporal: 'future' })],
      [{ category: 'project_details', content: 'Mnemograph uses Neo4j' }],
    );
    expect(p).toEqual({ works_at: 'Microsoft', likes: ['coffee'], not_likes: ['tea'], history: ['user lives_in Oslo'], plans: ['user works_at Stripe'], project_details: ['Mnemograph uses Neo4j'] });
  });

  it('renders a narrative capped in words', () => {
    const n = renderNarrative({ works_at: 'Acme', likes: ['tea', 'chess'] }, ['user works at Acme']);
    expect(n).toBe('works at: Acme. likes: tea, chess. Recently learned: user works at Acme.');
    const huge = renderNarrative({ notes: Array.from({ length: 20 }, () => 'word '.repeat(100).trim()), a: 'b' }, []);
    expect(huge.split(/\s+/).length).toBeLessThanOrEqual(NARRATIVE_MAX_WORDS);
  });
});

describe('worker helpers', () => {
  it('rewrites third-person observations to first person', () => {
    expect(observationAsFirstPerson('User prefers short emails')).toBe('I prefer short emails');
    expect(observationAsFirstPerson("The user's sister is Alice")).toBe('My sister is Alice');
    expect(observationAsFirstPerson('User works at Acme')).toBe('I work at Acme');
    expect(observationAsFirstPerson('I live in Oslo')).toBe('I live in Oslo');
  });

  it('derives tool sequences and context patterns', () => {
    expect(toolSequenceOf(['search', 'search', 'fetch', 'search'])).toEqual(['search', 'fetch', 'search']);
    expect(contextPatternOf('Please fix the failing CI build for the payments service')).toMatch(/build/);
  });

  it('treats similar claims with different objects as different statements', () => {
    expect(sameStatement('{"object":"Google","polarity":"positive"}', '{"object":"the google"}')).toBe(true);
    expect(sameStatement('{"object":"Google"}', '{"object":"Microsoft"}')).toBe(false);
    expect(sameStatement('{"object":"tea"}', '{"object":"tea","polarity":"negative"}')).toBe(false);
    expect(sameStatement(null, null)).toBe(true);
  });
});
