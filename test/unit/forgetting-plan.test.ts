import { entityAction, factAction, planKnowledge, planRest, profileClaim, toPlan } from '../../src/forgetting/plan';
import { forgetProfile, profileChanges } from '../../src/observations/profile';
import type { ForgettableFact } from '../../src/semantic/neo4j-semantic-forgetting';

const PERSON = { keepDerived: false, keepConfirmed: false };
const RETENTION = { keepDerived: false, keepConfirmed: true };
const KEEP = { keepDerived: true, keepConfirmed: false };
const fact = (over: Partial<ForgettableFact> = {}): ForgettableFact => ({
  id: 'f1',
  claim: 'user works at Feedzai',
  predicate: 'works_at',
  temporal: 'current',
  props: null,
  status: 'active',
  claimKey: 'user works at feedzai',
  otherSources: [],
  confirmed: false,
  sourcedHere: true,
  ...over,
});
const entity = (over: Partial<Parameters<typeof entityAction>[0]> = {}) => ({
  id: 'e1',
  name: 'Feedzai',
  anchor: false,
  confirmed: false,
  facts: 0,
  relationships: 0,
  otherConversations: 0,
  namedElsewhere: false,
  ...over,
});

describe('what a delete takes with it', () => {
  it('a fact goes when only the deleted turns taught it; another source, keepDerived or (for the retention rule) a confirmation keeps it', () => {
    expect(factAction(fact(), PERSON).action).toBe('delete');
    expect(factAction(fact({ otherSources: ['c2:0'] }), PERSON)).toEqual({ action: 'keep', why: 'also learned from 1 other turn: only this source goes' });
    expect(factAction(fact(), KEEP).action).toBe('keep');
    expect(factAction(fact({ confirmed: true }), PERSON).action).toBe('delete');
    expect(factAction(fact({ confirmed: true }), RETENTION)).toEqual({ action: 'keep', why: 'confirmed by the user' });
  });

  it('an entity goes only when nothing that stays mentions it, and never the user', () => {
    expect(entityAction(entity(), PERSON)).toEqual({ action: 'delete', why: 'nothing that stays mentions it' });
    expect(entityAction(entity({ anchor: true }), PERSON).action).toBe('keep');
    expect(entityAction(entity({ facts: 2, otherConversations: 1 }), PERSON)).toEqual({ action: 'keep', why: '2 other facts about it; mentioned in 1 other conversation' });
    expect(entityAction(entity({ namedElsewhere: true }), PERSON).why).toBe('named in a turn that stays');
    expect(entityAction(entity(), KEEP).action).toBe('keep');
  });

  it('counts every item per kind and action', () => {
    const items = [
      ...planKnowledge({ facts: [fact(), fact({ id: 'f2', otherSources: ['x:1'] })], relationships: [{ id: 'r1', label: 'user WORKS_FOR Feedzai' }] }, PERSON),
      ...planRest(
        { entities: [entity()], strategies: [{ id: 's1', description: 'search then book', otherConversations: 0 }], toolInvocations: [{ id: 't1', tool: 'search' }], poolEntries: [] },
        PERSON,
      ),
    ];
    const { counts } = toPlan(items);
    expect(counts.fact).toEqual({ delete: 1, keep: 1, restore: 0 });
    expect(counts.relationship.delete).toBe(1);
    expect(counts.entity.delete).toBe(1);
    expect(counts.strategy.delete).toBe(1);
    expect(counts.toolInvocation.delete).toBe(1);
    expect(counts.poolEntry).toEqual({ delete: 0, keep: 0, restore: 0 });
  });

  it("reads a stored fact's profile form", () => {
    expect(profileClaim('user is allergic to peanuts', 'allergic_to', 'current', JSON.stringify({ object: 'peanuts', polarity: 'positive', single_valued: false }))).toEqual({
      claim: 'user is allergic to peanuts',
      relation: 'allergic_to',
      object: 'peanuts',
      polarity: 'positive',
      singleValued: false,
      temporal: 'current',
    });
    expect(profileClaim('a note', null, null, null)).toBeNull();
  });
});

describe('forgetting in the profile', () => {
  const peanuts = { claim: 'user is allergic to peanuts', relation: 'allergic_to', object: 'peanuts', polarity: 'positive' as const, singleValued: false, temporal: 'current' as const };
  const feedzai = { claim: 'user works at Feedzai', relation: 'works_at', object: 'Feedzai', polarity: 'positive' as const, singleValued: true, temporal: 'current' as const };

  it('takes a forgotten value out of its key, its claim out of every list, and leaves other values', () => {
    const before = { allergic_to: ['peanuts', 'shellfish'], works_at: 'Feedzai', history: ['user works at Feedzai', 'user lived in Porto'] };
    const after = forgetProfile(before, [peanuts, feedzai]);
    expect(after).toEqual({ allergic_to: ['shellfish'], history: ['user lived in Porto'] });
    expect(before.allergic_to).toEqual(['peanuts', 'shellfish']); // not changed in place
    expect(profileChanges(before, after)).toEqual({
      removed: [
        { key: 'allergic_to', value: 'peanuts' },
        { key: 'works_at', value: 'Feedzai' },
        { key: 'history', value: 'user works at Feedzai' },
      ],
      added: [],
    });
  });

  it('leaves a single value that differs, and folds restored facts back in', () => {
    const lisbon = { ...feedzai, claim: 'user lives in Lisbon', relation: 'lives_in', object: 'Lisbon' };
    const berlin = { ...lisbon, claim: 'user lives in Berlin', object: 'Berlin' };
    expect(forgetProfile({ works_at: 'Google' }, [feedzai])).toEqual({ works_at: 'Google' });
    expect(forgetProfile({ lives_in: 'Berlin' }, [berlin], [lisbon])).toEqual({ lives_in: 'Lisbon' });
  });
});
