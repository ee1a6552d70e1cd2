import { calibrate, certaintyFromNumber } from '../../src/extraction/calibration';
import { ExtractionRejectedError, type ExtractionTurn } from '../../src/extraction/contract';
import { contradicts, resolveContradiction } from '../../src/extraction/contradictions';
import { LLM_EXTRACTION_JSON_SCHEMA, LlmExtractionSchema, LlmExtractionWireSchema, normalizeJsonValues, parseLlmExtraction } from '../../src/extraction/llm-output';
import { costUsd } from '../../src/llm/pricing';
import { RulesExtractor } from '../../src/extraction/rules-extractor';

const turns: ExtractionTurn[] = [
  { id: 'c1:0', role: 'user', content: 'I moved to Lisbon.', timestamp: '2024-03-01T10:00:00Z', speaker: 'Ana' },
  { id: 'c1:1', role: 'assistant', content: 'Nice!', timestamp: '2024-03-01T10:00:05Z' },
];

describe('structured output schema', () => {
  /** Every object node of a JSON Schema, with its path. */
  function objects(node: unknown, path = '$'): Array<{ path: string; node: Record<string, unknown> }> {
    if (node === null || typeof node !== 'object') return [];
    const n = node as Record<string, unknown>;
    const own = n.type === 'object' ? [{ path, node: n }] : [];
    return [...own, ...Object.entries(n).flatMap(([k, v]) => (Array.isArray(v) ? v.flatMap((x, i) => objects(x, `${path}.${k}[${i}]`)) : objects(v, `${path}.${k}`)))];
  }

  it("is in OpenAI's strict subset: every object closed, every property required, no defaults", () => {
    const all = objects(LLM_EXTRACTION_JSON_SCHEMA);
    expect(all.length).toBeGreaterThanOrEqual(5);
    for (const { path, node } of all) {
      expect([path, node.additionalProperties]).toEqual([path, false]);
      expect([path, [...((node.required as string[]) ?? [])].sort()]).toEqual([path, Object.keys(node.properties as object).sort()]);
    }
    expect(JSON.stringify(LLM_EXTRACTION_JSON_SCHEMA)).not.toMatch(/"default"|"\$schema"/);
  });

  it('admits only answers the validating zod schema accepts, with the same meaning', () => {
    const answer = LlmExtractionWireSchema.parse({
      entities: [{ name: 'Revolut', type: 'organization', aliases: [], description: null }],
      facts: [
        {
          claim: 'Dana works at Revolut',
          subject: 'Dana',
          relation: 'works_at',
          object: 'Revolut',
          polarity: 'positive',
          single_valued: true,
          certainty: 'explicit',
          temporal: 'current',
          is_correction: true,
          ends: false,
          source_turn: 'T3',
          valid_from: '2024-10-01',
          valid_to: null,
        },
      ],
      relationships: [{ source: 'Dana', target: 'Revolut', type: 'WORKS_FOR', properties: [{ key: 'since', value: 'October' }], source_turn: null }],
    });
    const validated = LlmExtractionSchema.parse(answer);
    expect(validated.facts[0]).toMatchObject({ relation: 'works_at', object: 'Revolut', single_valued: true, is_correction: true, ends: false, valid_from: '2024-10-01T00:00:00.000Z' });
    expect(validated.relationships[0]!.properties).toEqual({ since: 'October' });
  });
});

describe('calibration', () => {
  it('maps labels to the seed 003 numbers and bare numbers to the nearest label', () => {
    expect([calibrate('explicit'), calibrate('implied'), calibrate('inferred'), calibrate('uncertain')]).toEqual([0.95, 0.85, 0.7, 0.5]);
    expect(certaintyFromNumber(0.88)).toBe('implied');
    expect(certaintyFromNumber(99)).toBe('explicit');
    expect(certaintyFromNumber(0.3)).toBe('uncertain');
  });
});

describe('LLM output repair', () => {
  const good = {
    entities: [{ name: 'Lisbon', type: 'city' }],
    facts: [{ claim: 'Ana lives in Lisbon', subject: 'Ana', relation: 'lives in', object: 'Lisbon', certainty: 'implied', source_turn: 'T0' }],
    relationships: [],
  };

  it('accepts a clean answer, maps types, relation case and the cited turn', () => {
    const r = parseLlmExtraction(JSON.stringify(good), turns);
    expect(r.entities[0]).toEqual({ name: 'Lisbon', type: 'place', aliases: [], description: undefined });
    expect(r.facts[0]).toMatchObject({ relation: 'lives_in', confidence: 0.85, sourceTurnId: 'c1:0', temporal: 'current', polarity: 'positive' });
    expect(r.repairs).toEqual([]);
  });

  it('strips a <think> preamble, a code fence and prose, and says so', () => {
    const raw = `<think>The user says they moved...</think>\nHere you go:\n\`\`\`json\n${JSON.stringify(good)}\n\`\`\`\nHope it helps`;
    const r = parseLlmExtraction(raw, turns);
    expect(r.facts).toHaveLength(1);
    expect(r.repairs).toEqual(expect.arrayContaining(['stripped <think> block', 'unwrapped markdown code fence']));
  });

  it('unwraps stringified JSON values recursively and coerces "true" and numeric certainty', () => {
    const raw = JSON.stringify({
      entities: JSON.stringify([{ name: 'Bo', type: 'person', aliases: JSON.stringify(['Bobby']) }]),
      facts: [{ claim: 'Bo likes tea', subject: 'Bo', relation: 'likes', object: 'tea', certainty: 0.93, is_correction: 'true', single_valued: 'false' }],
    });
    const r = parseLlmExtraction(raw, turns);
    expect(r.entities[0]!.aliases).toEqual(['Bobby']);
    expect(r.facts[0]).toMatchObject({ certainty: 'explicit', confidence: 0.95, isCorrection: true, singleValued: false, sourceTurnId: 'c1:0' });
    expect(r.repairs).toContain('unwrapped stringified JSON values');
    expect(normalizeJsonValues({ a: '{"b":"[1,2]"}', c: '{not json' })).toEqual({ a: { b: [1, 2] }, c: '{not json' });
  });

  it.each([
    ['invalid JSON', '{"entities": [', /invalid JSON/],
    ['an empty answer', '   ', /empty answer/],
    ['an unterminated think block', '<think>still thinking', /unterminated <think>/],
    ['no object at all', 'I cannot help with that', /no JSON object/],
    ['wrong types', JSON.stringify({ facts: [{ claim: 42, subject: 'x', relation: 'r' }] }), /wrong types at facts\.0\.claim/],
    ['a list instead of an object', '[{"name": "x"}]', /is a list/],
  ])('rejects %s with the reason', (_label, raw, reason) => {
    let caught: unknown;
    try {
      parseLlmExtraction(raw, turns);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ExtractionRejectedError);
    expect((caught as ExtractionRejectedError).reason).toMatch(reason);
  });
});

describe('changes of state', () => {
  const cur = { polarity: 'positive' as const, temporal: 'current' as const, singleValued: true };
  const stored = [
    { id: 'f1', relation: 'works_at', object: 'Feedzai', ...cur },
    { id: 'f2', relation: 'works_at', object: 'Acme', ...cur, temporal: 'past' as const },
    { id: 'f3', relation: 'lives_in', object: 'Feedzai', ...cur },
  ];
  it('an ending supersedes the current value it names (or every current value), whatever the policy', () => {
    const ending = { relation: 'works_at', object: 'feedzai', polarity: 'positive' as const, singleValued: true, temporal: 'past' as const, isCorrection: false, ends: true };
    expect(resolveContradiction(ending, stored, 'prefer_old')).toEqual({ action: 'supersede', factIds: ['f1'] });
    expect(resolveContradiction({ ...ending, object: undefined }, stored, 'flag_review')).toEqual({ action: 'supersede', factIds: ['f1'] });
    expect(resolveContradiction({ ...ending, object: 'Google' }, stored, 'prefer_new')).toEqual({ action: 'store' });
  });
});

describe('contradiction detection', () => {
  const cur = { polarity: 'positive' as const, temporal: 'current' as const };
  const worksAtGoogle = { id: 'f1', relation: 'works_at', object: 'Google', singleValued: true, ...cur };
  const likesTea = { id: 'f2', relation: 'likes', object: 'tea', singleValued: false, ...cur };

  it('only compares the same relation; single-valued relations clash on a different value', () => {
    expect(contradicts(worksAtGoogle, { relation: 'works_at', object: 'Microsoft', singleValued: true, ...cur })).toBe(true);
    expect(contradicts(worksAtGoogle, { relation: 'works_at', object: 'the google', singleValued: true, ...cur })).toBe(false);
    expect(contradicts(worksAtGoogle, { relation: 'lives_in', object: 'Paris', singleValued: true, ...cur })).toBe(false);
    expect(contradicts(likesTea, { relation: 'likes', object: 'coffee', singleValued: false, ...cur })).toBe(false);
    expect(contradicts(likesTea, { relation: 'likes', object: 'Tea', singleValued: false, polarity: 'negative', temporal: 'current' })).toBe(true);
    expect(contradicts(worksAtGoogle, { relation: 'works_at', object: 'IBM', singleValued: true, polarity: 'positive', temporal: 'past' })).toBe(false);
  });

  it('applies each policy, and a correction always supersedes', () => {
    const incoming = { relation: 'works_at', object: 'Microsoft', singleValued: true, isCorrection: false, ...cur };
    expect(resolveContradiction(incoming, [worksAtGoogle, likesTea], 'prefer_new')).toEqual({ action: 'supersede', factIds: ['f1'] });
    expect(resolveContradiction(incoming, [worksAtGoogle], 'prefer_old')).toEqual({ action: 'keep_old', factIds: ['f1'] });
    expect(resolveContradiction(incoming, [worksAtGoogle], 'flag_review')).toEqual({ action: 'flag', factIds: ['f1'] });
    expect(resolveContradiction({ ...incoming, isCorrection: true }, [worksAtGoogle], 'prefer_old')).toEqual({ action: 'supersede', factIds: ['f1'] });
    expect(resolveContradiction({ ...incoming, object: 'Google' }, [worksAtGoogle], 'flag_review')).toEqual({ action: 'store' });
  });
});

describe('pricing', () => {
  it('costs known models and honours overrides; unknown models are free', () => {
    expect(costUsd('gpt-4o-mini', 1_000_000, 1_000_000)).toBeCloseTo(0.75);
    expect(costUsd('gpt-4o-mini-2024-07-18', 1_000_000, 0)).toBeCloseTo(0.15);
    expect(costUsd('local-llama', 1000, 1000)).toBe(0);
    expect(costUsd('local-llama', 1_000_000, 0, { inputPerMTok: 2 })).toBeCloseTo(2);
  });
});

describe('rules extractor', () => {
  const ex = new RulesExtractor();
  const at = '2023-05-08T12:00:00.000Z';
  const run = (lines: string[], role: ExtractionTurn['role'] = 'user') =>
    ex.extract({ userId: 'u', channel: '_global', turns: lines.map((content, i) => ({ id: `c:${i}`, role, content, timestamp: at, speaker: 'Bob' })) });

  it('finds people, places and organizations', async () => {
    const r = await run(['My sister Alice moved to Berlin last year and I work at Acme Corp.', 'We hiked in Yosemite National Park with John Smith.']);
    const byName = Object.fromEntries(r.entities.map((e) => [e.name, e.type]));
    expect(byName).toMatchObject({ Alice: 'person', Berlin: 'place', 'Acme Corp': 'organization', 'Yosemite National Park': 'place', 'John Smith': 'person', Bob: 'person' });
  });

  it('turns first-person statements into calibrated facts with temporal tags', async () => {
    const r = await run(['I work at Google.', 'I used to live in Boston.', "I'm going to work at Stripe next month.", 'I hate cilantro.', 'I think I prefer tea.', 'My boss is Vitaly.']);
    const facts = r.facts.map((f) => [f.relation, f.object, f.polarity, f.certainty, f.temporal]);
    expect(facts).toEqual(
      expect.arrayContaining([
        ['works_at', 'Google', 'positive', 'explicit', 'current'],
        ['lives_in', 'Boston', 'positive', 'explicit', 'past'],
        ['plans', 'work at Stripe', 'positive', 'explicit', 'future'],
        ['likes', 'cilantro', 'negative', 'explicit', 'current'],
        ['boss', 'Vitaly', 'positive', 'explicit', 'current'],
      ]),
    );
    // A hedge ("I think") states nothing.
    expect(r.facts.find((f) => f.object === 'tea')).toBeUndefined();
    expect(r.facts.find((f) => f.object === 'work at Stripe')!.validFrom).toBe('2023-06-08T12:00:00.000Z');
    expect(r.entities.find((e) => e.name === 'Vitaly')).toMatchObject({ type: 'person', aliases: ['my boss'] });
    expect(r.usage).toMatchObject({ provider: 'rules', inputTokens: 0, costUsd: 0 });
  });

  it('reads a job title and its employer, keeps "St." inside a name, and takes no validity from a part of the day', async () => {
    const r = await run(["I work as a nurse at St. Mary's hospital in Leeds, mostly night shifts.", 'I moved to St. Louis in May.']);
    expect(r.facts.map((f) => [f.relation, f.object, f.validFrom])).toEqual([
      ['job_title', 'nurse', undefined],
      ['works_at', 'St. Mary', undefined],
      ['lives_in', 'St. Louis', '2023-05-01T12:00:00.000Z'],
    ]);
    expect(r.entities.map((e) => [e.name, e.type])).toEqual([
      ['Bob', 'person'],
      ['St. Mary', 'organization'],
      ['Leeds', 'place'],
      ['St. Louis', 'place'],
    ]);
  });

  it('marks corrections, including a bare "no, I meant X"', async () => {
    const r = await run(['I work at Google.', 'No, I meant Microsoft.', 'Actually, I live in Paris now.']);
    expect(r.facts.filter((f) => f.isCorrection).map((f) => [f.relation, f.object])).toEqual([
      ['works_at', 'Microsoft'],
      ['lives_in', 'Paris'],
    ]);
    expect(r.facts.find((f) => f.object === 'Google')!.isCorrection).toBe(false);
  });

  it('turns changes of state into endings, and reads the issue #20 dialogue right', async () => {
    const r = await run([
      "Hi, I'm Dana. I just moved to Lisbon from Berlin last month.",
      'Good. I work as a data engineer at Feedzai now, mostly on Kafka pipelines.',
      "My dog Pixel hates the trams. Also I'm allergic to peanuts, remember that for recipes.",
      "Actually I don't work at Feedzai anymore, I joined Revolut in October.",
    ]);
    const facts = r.facts.filter((f) => f.subject === 'Bob').map((f) => [f.relation, f.object, f.temporal, f.ends === true]);
    expect(facts).toEqual([
      ['name', 'Dana', 'current', false],
      ['lives_in', 'Lisbon', 'current', false],
      ['lives_in', 'Berlin', 'past', true],
      ['job_title', 'data engineer', 'current', false],
      ['works_at', 'Feedzai', 'current', false],
      ['pet', 'Pixel', 'current', false],
      ['allergic_to', 'peanuts', 'current', false],
      ['works_at', 'Feedzai', 'past', true],
      ['works_at', 'Revolut', 'current', false],
    ]);
    // Dana is the speaker's own name: an alias, not a second person; no name glued across sentences.
    expect(r.entities.find((e) => e.name === 'Bob')!.aliases).toEqual(['Dana']);
    expect(r.entities.map((e) => e.name).sort()).toEqual(['Berlin', 'Bob', 'Feedzai', 'Kafka', 'Lisbon', 'Pixel', 'Revolut']);
  });

  it.each([
    ['I quit my job last week.', ['works_at', undefined, 'past', true]],
    ['I sold my Volvo yesterday.', ['owns', 'Volvo', 'past', true]],
    ['Jake and I broke up.', ['partner', 'Jake', 'past', true]],
    ['I finally stopped smoking!', ['activity', 'smoking', 'past', true]],
    ['I switched to a vegan diet.', ['diet', 'vegan', 'current', false]],
    ['I started running in January.', ['activity', 'running', 'current', false]],
    ['I no longer work for Acme anymore.', ['works_at', 'Acme', 'past', true]],
    // Quitting with no employer named ends every current one and invents none.
    ['I quit.', ['works_at', undefined, 'past', true]],
    ["I just quit, no idea what's next.", ['works_at', undefined, 'past', true]],
    ['I got laid off yesterday.', ['works_at', undefined, 'past', true]],
    ["I'm unemployed now.", ['works_at', undefined, 'past', true]],
    ['I quit smoking.', ['activity', 'smoking', 'past', true]],
  ])('reads a change of state: %s', async (line, expected) => {
    const r = await run([line]);
    expect(r.facts.map((f) => [f.relation, f.object, f.temporal, f.ends === true])).toEqual([expected]);
  });

  it('takes the employer, not the city it is in', async () => {
    const r = await run(['I work for Zalando in Berlin.', 'I work at Spotify in Stockholm.']);
    expect(r.facts.filter((f) => f.relation === 'works_at').map((f) => f.object)).toEqual(['Zalando', 'Spotify']);
  });

  it.each([
    "I don't have any pets.",
    'I think I might be moving to Berlin, not sure yet.',
    'Do you think I should move to Denver?',
    "If I lived in Paris I'd eat croissants every day.",
    'I wish I had a dog.',
    "I'm not married.",
    'Should I quit?',
    "I think I'll quit if nothing changes.",
    'Maybe I got fired, the email was unclear.',
  ])('states nothing for a negation, hedge, question or wish: %s', async (line) => {
    expect((await run([line])).facts).toEqual([]);
  });

  it('resolves subjects: my sister by her name, a named person, an unnamed relative', async () => {
    const r = await run(['My sister lives in Rome. Her name is Giulia.', 'My brother lives in Oslo and works for Equinor.', 'My wife loves opera but I find it boring.']);
    expect(r.facts.map((f) => [f.subject, f.relation, f.object, f.polarity])).toEqual([
      ['Giulia', 'lives_in', 'Rome', 'positive'],
      ['Bob', 'sister', 'Giulia', 'positive'],
      ["Bob's brother", 'lives_in', 'Oslo', 'positive'],
      ["Bob's brother", 'works_at', 'Equinor', 'positive'],
      ["Bob's spouse", 'likes', 'opera', 'positive'],
      ['Bob', 'likes', 'opera', 'negative'],
    ]);
  });

  it('takes no first-person facts from assistant turns', async () => {
    const r = await run(['I work at Google.'], 'assistant');
    expect(r.facts).toEqual([]);
  });
});
