import type { GoldObservation, LocomoSpeakers } from '../../bench/locomo-observations';
import {
  candidatePairs,
  factKey,
  observationClass,
  pairKey,
  precisionFromLabels,
  ruleAgreement,
  ruleMatch,
  sampleByHash,
  scoreObservations,
  speakerEntities,
  subjectOwner,
  words,
  wrongSpeakerFacts,
  type LearnedFact,
  type PairLabel,
} from '../../bench/observation-score';

const speakers: LocomoSpeakers = { a: 'Caroline', b: 'Melanie' };

function fact(p: Partial<LearnedFact> & { subject: string; predicate: string; sources: string[] }): LearnedFact {
  return {
    conversation: 'conv-26',
    id: `f-${p.subject}-${p.predicate}-${p.object ?? ''}-${p.sources.join()}`,
    claim: `${p.subject} ${p.predicate} ${p.object ?? ''}`,
    polarity: 'positive',
    temporal: 'current',
    status: 'active',
    about: [],
    ...p,
  };
}
const obs = (speaker: string, text: string, evidence: string[]): GoldObservation => ({ conversation: 'conv-26', session: 1, speaker, text, evidence });

const paints = obs('Melanie', 'Painting is a fun way for Melanie to express her feelings.', ['D1:16']);

describe('observation matching rule', () => {
  it('folds word forms onto one stem and drops stop words', () => {
    expect(words('painting painted paints')).toEqual(['paint', 'paint', 'paint']);
    expect(words("Melanie's kids are running")).toEqual(['melani', 'kid', 'run']);
  });

  it('matches a fact from an evidence turn whose subject and value are in the observation', () => {
    expect(ruleMatch(paints, fact({ subject: 'Melanie', predicate: 'likes', object: 'painting', sources: ['D1:16'] }), speakers).match).toBe(true);
  });

  it('does not match a fact from another turn, about someone the observation does not name, or with another value', () => {
    expect(ruleMatch(paints, fact({ subject: 'Melanie', predicate: 'likes', object: 'painting', sources: ['D1:15'] }), speakers)).toMatchObject({ match: false, sourced: false });
    expect(ruleMatch(paints, fact({ subject: 'Caroline', predicate: 'likes', object: 'painting', sources: ['D1:16'] }), speakers)).toMatchObject({ match: false, subject: false });
    expect(ruleMatch(paints, fact({ subject: 'Melanie', predicate: 'likes', object: 'pottery class', sources: ['D1:16'] }), speakers)).toMatchObject({ match: false, overlap: 0 });
  });

  it('reads "user" as speaker A and uses the claim when the fact has no object', () => {
    const o = obs('Caroline', 'Caroline went to an LGBTQ support group.', ['D1:3']);
    expect(ruleMatch(o, fact({ subject: 'user', predicate: 'activity', sources: ['D1:3'], claim: 'user went to a support group' }), speakers).match).toBe(true);
  });

  it('pairs an observation with every fact sourced from one of its evidence turns, once each', () => {
    const o = obs('Caroline', 'x', ['D1:3', 'D1:5']);
    const f = fact({ subject: 'Caroline', predicate: 'likes', object: 'x', sources: ['D1:3', 'D1:5'] });
    const other = fact({ subject: 'Caroline', predicate: 'likes', object: 'y', sources: ['D2:1'] });
    expect(candidatePairs([o], [f, other]).map((p) => p.f)).toEqual([f]);
  });
});

describe('speakers', () => {
  it('names the speaker a subject is about', () => {
    expect(subjectOwner('user', speakers)).toBe('Caroline');
    expect(subjectOwner("user's sister", speakers)).toBe('Caroline');
    expect(subjectOwner("Melanie's kids", speakers)).toBe('Melanie');
    expect(subjectOwner('Oscar', speakers)).toBeUndefined();
  });

  it('counts a fact about one speaker learned from the other one’s turn as wrong-speaker', () => {
    const turnSpeakers = new Map([
      ['conv-26 D1:2', 'Melanie'],
      ['conv-26 D1:3', 'Caroline'],
    ]);
    const wrong = fact({ subject: 'user', predicate: 'likes', object: 'kids', sources: ['D1:2'] });
    const right = fact({ subject: 'Caroline', predicate: 'likes', object: 'art', sources: ['D1:3'] });
    const third = fact({ subject: 'Oscar', predicate: 'likes', object: 'hay', sources: ['D1:2'] });
    expect(wrongSpeakerFacts({ facts: [wrong, right, third], speakers: new Map([['conv-26', speakers]]), turnSpeakers })).toEqual([wrong]);
  });
});

describe('speaker entities', () => {
  it('counts facts about a speaker that are ABOUT that speaker’s entity, or the other one’s', () => {
    const facts = [
      fact({ subject: 'Melanie', predicate: 'likes', object: 'art', sources: ['D1:2'], about: ['Melanie'] }),
      fact({ subject: 'Melanie', predicate: 'likes', object: 'pottery', sources: ['D1:2'], about: ['Caroline', 'pottery'] }),
      fact({ subject: 'user', predicate: 'likes', object: 'tea', sources: ['D1:3'], about: ['user'] }),
      fact({ subject: "Melanie's son", predicate: 'likes', object: 'dinosaurs', sources: ['D1:2'], about: ["Melanie's son"] }),
    ];
    expect(speakerEntities({ facts, speakers: new Map([['conv-26', speakers]]) })).toEqual({ aboutASpeaker: 3, aboutOwnEntity: 2, aboutOtherSpeakerEntity: 1 });
  });
});

describe('samples and labels', () => {
  const items = Array.from({ length: 50 }, (_, i) => `item-${i}`);

  it('draws the same sample for the same seed, and a changed set keeps what is still in it', () => {
    const a = sampleByHash(items, (x) => x, 10, 's');
    expect(sampleByHash([...items].reverse(), (x) => x, 10, 's')).toEqual(a);
    expect(sampleByHash(items, (x) => x, 10, 't')).not.toEqual(a);
    const grown = sampleByHash([...items, 'item-new'], (x) => x, 10, 's');
    expect(grown.filter((x) => !a.includes(x)).length).toBeLessThanOrEqual(1);
  });

  it('reports unlabelled sampled facts instead of guessing them', () => {
    const f1 = fact({ subject: 'Caroline', predicate: 'likes', object: 'art', sources: ['D1:3'] });
    const f2 = fact({ subject: 'Caroline', predicate: 'likes', object: 'x', sources: ['D1:4'] });
    const f3 = fact({ subject: 'Caroline', predicate: 'plans', object: 'y', sources: ['D1:5'] });
    const p = precisionFromLabels(
      [f1, f2, f3],
      [
        { key: factKey(f1), fact: '', turns: [], label: 'correct' },
        { key: factKey(f2), fact: '', turns: [], label: 'wrong', reason: 'not a fact', why: '' },
      ],
    );
    expect(p).toMatchObject({ sampled: 3, labelled: 2, unlabelled: 1, correct: 1, wrong: 1, precision: 0.5, wrongReasons: { 'not a fact': 1 }, unlabelledFacts: [factKey(f3)] });
  });

  it('scores the rule against hand labels', () => {
    const r = ruleAgreement([
      { rule: true, label: 'match' },
      { rule: true, label: 'no match' },
      { rule: false, label: 'match' },
      { rule: false, label: 'no match' },
      { rule: false, label: 'no match' },
    ]);
    expect(r).toMatchObject({ labelled: 5, tp: 1, fp: 1, fn: 1, tn: 2, precision: 0.5, recall: 0.5, agreement: 0.6 });
  });
});

describe('scoreObservations', () => {
  it('reports coverage per speaker role, facts per turn and facts from turns no observation cites', () => {
    const observations = [paints, obs('Caroline', 'Caroline has a guinea pig named Oscar.', ['D1:3'])];
    const facts = [fact({ subject: 'Caroline', predicate: 'pet', object: 'Oscar', sources: ['D1:3'] }), fact({ subject: 'Caroline', predicate: 'likes', object: 'tea', sources: ['D1:9'] })];
    const turnSpeakers = new Map([
      ['conv-26 D1:3', 'Caroline'],
      ['conv-26 D1:9', 'Caroline'],
      ['conv-26 D1:16', 'Melanie'],
    ]);
    const score = (pairLabels: PairLabel[] = []) =>
      scoreObservations({ observations, facts, speakers: new Map([['conv-26', speakers]]), turnSpeakers, turns: 20, pairLabels, precisionLabels: [], seed: 's', pairSample: 10, precisionSample: 10 });
    const s = score();
    expect(s.coverage.overall).toMatchObject({ observations: 2, covered: 1, coverage: 0.5 });
    expect(s.coverage.bySpeakerRole.speaker_a).toMatchObject({ covered: 1, coverage: 1 });
    expect(s.coverage.bySpeakerRole.speaker_b).toMatchObject({ covered: 0, coverage: 0 });
    expect(s.facts).toMatchObject({ total: 2, perTurn: 0.1, fromTurnsWithoutGoldObservation: 1, shareFromTurnsWithoutGoldObservation: 0.5, wrongSpeaker: 0 });
    expect(s.precision).toMatchObject({ sampled: 2, labelled: 0, unlabelled: 2, precision: null });
    // No pair labelled: by hand, the Oscar observation may or may not be covered.
    expect(s.coverage.byHandLabels.overall).toMatchObject({ atLeast: 0, atMost: 1, unlabelledObservations: 1, coverage: null });
    const oscar = s.samples.allPairs[0]!;
    const labelled = score([{ pair: pairKey(oscar.o, oscar.f), observation: '', fact: '', label: 'no match', why: '' }]);
    expect(labelled.coverage.byHandLabels.overall).toMatchObject({ atLeast: 0, atMost: 0, coverage: 0 });
    expect(labelled.matchRule.vsHandLabels).toMatchObject({ labelled: 1, fp: 1 });
  });

  it('classes observations by the first keyword class that matches', () => {
    expect(observationClass('Melanie took her kids camping')).toBe('family_relationships');
    expect(observationClass('Caroline has a guinea pig named Oscar and a dog')).toBe('pets');
    expect(observationClass('Jon is grateful')).toBe('feelings_views');
    expect(observationClass('Jon bought a hat')).toBe('other');
  });
});
