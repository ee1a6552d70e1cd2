import { startOpenAIChatServer } from '../support/llm-servers';
import { uid } from '../support/stack';
import { openHarness, type Harness } from './api-harness';

/**
 * Issue #20's dialogue, as a new user meets it: the default (offline rules) configuration,
 * turns through the HTTP API, then POST /consolidate. What is learned must be current where
 * the user said it changed.
 */
let h: Harness;
let key: string;
beforeAll(async () => {
  h = await openHarness({ EXTRACTION_PROVIDER: 'rules' });
  key = (await h.tenant()).key;
});
afterAll(async () => h.close());

const DIALOGUE: Array<['user' | 'assistant', string]> = [
  ['user', "Hi, I'm Dana. I just moved to Lisbon from Berlin last month."],
  ['assistant', 'Welcome to Lisbon! What do you do there?'],
  ['user', 'Good. I work as a data engineer at Feedzai now, mostly on Kafka pipelines.'],
  ['assistant', 'Nice. Anything I should remember?'],
  ['user', "My dog Pixel hates the trams. Also I'm allergic to peanuts, remember that for recipes."],
  ['user', "Actually I don't work at Feedzai anymore, I joined Revolut in October."],
];

interface FactOut {
  claim: string;
  predicate: string | null;
  status: string;
  temporal: string;
  validTo: string | null;
  properties: Record<string, unknown>;
}

it('learns Revolut as the current employer, Feedzai as past and ended, the allergy, and no merged names', async () => {
  const userId = uid('dana');
  const conversationId = uid('c');
  for (const [role, content] of DIALOGUE) expect((await h.call(key, 'POST', '/v1/turns', { userId, conversationId, role, content })).status).toBe(201);
  expect((await h.call(key, 'POST', `/v1/users/${userId}/consolidate`, {})).status).toBe(200);

  const listed = await h.call(key, 'POST', '/v1/facts/list', { userId, includeInactive: true, limit: 100 });
  expect(listed.status).toBe(200);
  const facts = listed.body.facts as FactOut[];
  const worksAt = facts.filter((f) => f.predicate === 'works_at');
  const current = worksAt.filter((f) => f.status === 'active' && f.temporal === 'current' && f.validTo === null);
  expect(current.map((f) => f.properties.object)).toEqual(['Revolut']);
  // Feedzai is past: the fact that said so is closed (superseded, with an end), and the ending is recorded.
  const feedzai = worksAt.filter((f) => f.properties.object === 'Feedzai');
  expect(feedzai.find((f) => f.status === 'superseded')).toMatchObject({ validTo: expect.any(String) });
  expect(feedzai.every((f) => f.status !== 'active' || f.temporal === 'past')).toBe(true);
  expect(facts.find((f) => f.predicate === 'allergic_to' && f.status === 'active')).toMatchObject({ properties: expect.objectContaining({ object: 'peanuts' }) });
  expect(facts.find((f) => f.predicate === 'lives_in' && f.status === 'active' && f.temporal === 'current')).toMatchObject({ properties: expect.objectContaining({ object: 'Lisbon' }) });

  const profile = await h.call(key, 'GET', `/v1/users/${userId}/profile`);
  expect(profile.body.profile).toMatchObject({ works_at: 'Revolut', lives_in: 'Lisbon', allergic_to: ['peanuts'] });
  expect(JSON.stringify(profile.body.profile.works_at)).not.toContain('Feedzai');

  // No entity glues two names ("Lisbon Dana"); Dana is the user (an alias), not a second person.
  for (const merged of ['Lisbon Dana', 'Dana Lisbon', 'Berlin Dana']) expect((await h.call(key, 'POST', '/v1/entities/by-name', { userId, name: merged })).body.entities).toEqual([]);
  const dana = (await h.call(key, 'POST', '/v1/entities/by-name', { userId, name: 'Dana' })).body.entities as Array<{ name: string; aliases: string[] }>;
  expect(dana.map((e) => [e.name, e.aliases])).toEqual([['user', ['Dana']]]);

  const ctx = await h.call(key, 'POST', '/v1/recall/context', { userId, query: 'where does Dana work?', tokenBudget: 600 });
  expect(ctx.status).toBe(200);
  const lines = (ctx.body.context as string).split('\n');
  // Revolut first, as the current value; Feedzai shown as past with its end, never as current.
  const firstEmployer = lines.find((l) => /Revolut|Feedzai/.test(l));
  expect(firstEmployer).toMatch(/^- \[fact:[^\]]+\] user works at Revolut \(current, since \d{4}-\d{2}-\d{2}\)$/);
  const feedzaiFacts = lines.filter((x) => x.startsWith('- [fact:') && /Feedzai/.test(x));
  expect(feedzaiFacts.length).toBeGreaterThan(0);
  for (const l of feedzaiFacts) expect(l).toMatch(/\(past, (?:ended|until) \d{4}-\d{2}-\d{2}\)$/);
  // The turn that changed it ranks above the turn that said Feedzai.
  const changeTurn = lines.findIndex((l) => l.startsWith('- [turn:') && l.includes("I don't work at Feedzai anymore"));
  const staleTurn = lines.findIndex((l) => l.startsWith('- [turn:') && l.includes('I work as a data engineer at Feedzai'));
  expect(changeTurn).toBeGreaterThan(-1);
  if (staleTurn > -1) expect(changeTurn).toBeLessThan(staleTurn);
  expect(lines.findIndex((l) => /Revolut/.test(l))).toBeLessThan(lines.findIndex((l) => /Feedzai/.test(l)));

  // Asked about the past, the old employer may lead.
  const before = await h.call(key, 'POST', '/v1/recall', { userId, query: 'where did Dana work before?' });
  expect(before.status).toBe(200);
  expect((before.body.facts as Array<{ text: string; temporal: string }>).filter((f) => /Feedzai/.test(f.text)).every((f) => f.temporal === 'past')).toBe(true);
}, 240_000);

it('"I quit" with no new employer ends the current employer and invents none', async () => {
  const userId = uid('quit');
  const conversationId = uid('c');
  for (const content of ['I work at Figma as a product designer.', 'I quit.']) {
    expect((await h.call(key, 'POST', '/v1/turns', { userId, conversationId, role: 'user', content })).status).toBe(201);
  }
  expect((await h.call(key, 'POST', `/v1/users/${userId}/consolidate`, {})).status).toBe(200);
  const facts = (await h.call(key, 'POST', '/v1/facts/list', { userId, includeInactive: true, limit: 100 })).body.facts as FactOut[];
  const worksAt = facts.filter((f) => f.predicate === 'works_at');
  // Figma's fact is closed with an end; nothing about an employer is current.
  expect(worksAt.find((f) => f.properties.object === 'Figma' && f.status === 'superseded')).toMatchObject({ validTo: expect.any(String) });
  expect(worksAt.filter((f) => f.status === 'active' && f.temporal === 'current')).toEqual([]);
  expect(worksAt.filter((f) => f.status === 'active').map((f) => [f.temporal, f.properties.object ?? null])).toEqual([['past', null]]);
  expect(facts.find((f) => f.predicate === 'job_title' && f.status === 'active')).toMatchObject({ properties: expect.objectContaining({ object: 'product designer' }) });
  const profile = await h.call(key, 'GET', `/v1/users/${userId}/profile`);
  expect(profile.body.profile.works_at).toBeUndefined();
  const entities = (await h.call(key, 'POST', '/v1/entities/by-name', { userId, name: 'Figma' })).body.entities as unknown[];
  expect(entities).toHaveLength(1);
}, 120_000);

it('an LLM extractor (structured output, real SDK against a local server) gets the same change-of-state semantics', async () => {
  const llm = await startOpenAIChatServer();
  const lh = await openHarness({ EXTRACTION_PROVIDER: 'openai-compatible', EXTRACTION_BASE_URL: llm.baseUrl, EXTRACTION_MODEL: 'local-model' });
  try {
    const lkey = (await lh.tenant()).key;
    const fact = (f: Partial<Record<string, unknown>>) => ({
      polarity: 'positive',
      single_valued: true,
      certainty: 'explicit',
      temporal: 'current',
      is_correction: false,
      ends: false,
      valid_from: null,
      valid_to: null,
      ...f,
    });
    llm.reply({
      text: JSON.stringify({
        entities: [
          { name: 'Feedzai', type: 'organization', aliases: [], description: null },
          { name: 'Revolut', type: 'organization', aliases: [], description: null },
        ],
        facts: [
          fact({ claim: 'user works at Feedzai', subject: 'user', relation: 'works_at', object: 'Feedzai', source_turn: 'T2' }),
          fact({ claim: 'user is allergic to peanuts', subject: 'user', relation: 'allergic_to', object: 'peanuts', single_valued: false, source_turn: 'T4' }),
          fact({ claim: 'user no longer works at Feedzai', subject: 'user', relation: 'works_at', object: 'Feedzai', temporal: 'past', ends: true, is_correction: true, source_turn: 'T5' }),
          fact({ claim: 'user works at Revolut', subject: 'user', relation: 'works_at', object: 'Revolut', is_correction: true, source_turn: 'T5' }),
        ],
        relationships: [],
      }),
    });
    const userId = uid('dana');
    const conversationId = uid('c');
    for (const [role, content] of DIALOGUE) expect((await lh.call(lkey, 'POST', '/v1/turns', { userId, conversationId, role, content })).status).toBe(201);
    expect((await lh.call(lkey, 'POST', `/v1/users/${userId}/consolidate`, {})).status).toBe(200);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.response_format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } });

    const facts = (await lh.call(lkey, 'POST', '/v1/facts/list', { userId, includeInactive: true, limit: 100 })).body.facts as FactOut[];
    const worksAt = facts.filter((f) => f.predicate === 'works_at');
    expect(worksAt.filter((f) => f.status === 'active' && f.temporal === 'current').map((f) => f.properties.object)).toEqual(['Revolut']);
    expect(worksAt.find((f) => f.properties.object === 'Feedzai' && f.status === 'superseded')).toMatchObject({ validTo: expect.any(String) });
    const ctx = await lh.call(lkey, 'POST', '/v1/recall/context', { userId, query: 'where does Dana work?', tokenBudget: 600 });
    const lines = (ctx.body.context as string).split('\n');
    expect(lines.find((l) => /Revolut|Feedzai/.test(l))).toMatch(/Revolut/);
  } finally {
    await lh.close();
    await llm.close();
  }
}, 120_000);
