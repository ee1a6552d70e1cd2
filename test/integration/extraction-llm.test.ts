import pino from 'pino';
import { AnthropicExtractor, ExtractionRejectedError, LlmExtractionWireSchema, OpenAIExtractor, PgUsageSink, type ExtractionWindow } from '../../src/extraction';
import { MnemographError } from '../../src/errors';
import { startAnthropicServer, startOpenAIChatServer, type LlmServer } from '../support/llm-servers';
import { openStack, uid, type TestStack } from '../support/stack';

let stack: TestStack;
let openai: LlmServer;
let anthropic: LlmServer;
const warnings: Array<Record<string, unknown>> = [];
const log = pino({ level: 'info' }, { write: (line: string) => void (JSON.parse(line).level === 40 && warnings.push(JSON.parse(line) as Record<string, unknown>)) });

beforeAll(async () => {
  stack = openStack();
  [openai, anthropic] = await Promise.all([startOpenAIChatServer(), startAnthropicServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
  await stack.close();
});

const window = (userId: string): ExtractionWindow => ({
  userId,
  channel: '_global',
  conversationId: 'conv-x',
  turns: [
    { id: 'conv-x:0', role: 'user', content: 'I moved to Lisbon last month, and my boss Vitaly is great.', timestamp: '2024-03-01T10:00:00Z', speaker: 'Ana' },
    { id: 'conv-x:1', role: 'assistant', content: 'Congrats on the move!', timestamp: '2024-03-01T10:00:03Z' },
  ],
});
const GOOD = JSON.stringify({
  entities: [
    { name: 'Ana', type: 'person' },
    { name: 'Lisbon', type: 'place' },
    { name: 'Vitaly', type: 'person', aliases: ['my boss'] },
  ],
  facts: [{ claim: 'Ana lives in Lisbon', subject: 'Ana', relation: 'lives_in', object: 'Lisbon', single_valued: true, certainty: 'implied', temporal: 'current', source_turn: 'T0' }],
  relationships: [{ source: 'Ana', target: 'Vitaly', type: 'KNOWS', properties: { role: 'boss' } }],
});

async function usageRows(userId: string) {
  return (await stack.pg.query('SELECT provider, model, input_tokens, output_tokens, cost_usd::float AS cost, ok, error FROM llm_usage WHERE user_id = $1 ORDER BY id', [userId])).rows;
}

describe.each([
  [
    'openai',
    () =>
      new OpenAIExtractor('openai', { model: 'gpt-4o-mini', apiKey: 'sk-test', baseUrl: openai.baseUrl, timeoutMs: 5000, maxOutputTokens: 1000, maxRetries: 0, usage: new PgUsageSink(stack.pg), log }),
    () => openai,
  ],
  [
    'anthropic',
    () =>
      new AnthropicExtractor({
        model: 'claude-haiku-4-5',
        apiKey: 'sk-ant-test',
        baseUrl: anthropic.baseUrl,
        timeoutMs: 5000,
        maxOutputTokens: 1000,
        maxRetries: 0,
        usage: new PgUsageSink(stack.pg),
        log,
      }),
    () => anthropic,
  ],
] as const)('%s extractor through the real SDK', (provider, make, server) => {
  it('extracts entities, facts and relationships in one call and accounts tokens and cost', async () => {
    const userId = uid('u');
    server().reply({ text: GOOD, inputTokens: 1200, outputTokens: 300 });
    const before = server().requests.length;
    const r = await make().extract(window(userId));
    expect(server().requests.length).toBe(before + 1);
    expect(JSON.stringify(server().requests.at(-1))).toContain('I moved to Lisbon');
    expect(r.entities.map((e) => e.name)).toEqual(['Ana', 'Lisbon', 'Vitaly']);
    expect(r.facts[0]).toMatchObject({ relation: 'lives_in', object: 'Lisbon', confidence: 0.85, sourceTurnId: 'conv-x:0', singleValued: true });
    expect(r.relationships[0]).toMatchObject({ source: 'Ana', target: 'Vitaly', type: 'KNOWS' });
    const expectedCost = provider === 'openai' ? (1200 * 0.15 + 300 * 0.6) / 1e6 : (1200 * 1 + 300 * 5) / 1e6;
    expect(r.usage).toMatchObject({ provider, inputTokens: 1200, outputTokens: 300 });
    expect(r.usage.costUsd).toBeCloseTo(expectedCost, 9);
    const rows = await usageRows(userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ provider, input_tokens: 1200, output_tokens: 300, ok: true, error: null });
    expect(rows[0].cost).toBeCloseTo(expectedCost, 6);
  });

  it('repairs a <think> preamble with a fenced answer', async () => {
    const userId = uid('u');
    server().reply({ text: `<think>Ana moved, so she lives in Lisbon.</think>\n\`\`\`json\n${GOOD}\n\`\`\`` });
    const r = await make().extract(window(userId));
    expect(r.facts).toHaveLength(1);
    expect(r.repairs).toEqual(expect.arrayContaining(['stripped <think> block', 'unwrapped markdown code fence']));
    // The repair path is the fallback for an answer that did not come as structured output.
    if (provider === 'anthropic') expect(r.repairs).toContain('answered without structured output; parsed from text');
  });

  it('sends the answer schema as structured output, and validates what comes back with the same zod schema', async () => {
    const userId = uid('u');
    // What a strict-schema answer looks like: every field present, nulls, properties as key/value pairs.
    const strict = LlmExtractionWireSchema.parse({
      entities: [{ name: 'Vitaly', type: 'person', aliases: ['my boss'], description: null }],
      facts: [
        {
          claim: 'Ana no longer works at Feedzai',
          subject: 'Ana',
          relation: 'works_at',
          object: 'Feedzai',
          polarity: 'positive',
          single_valued: true,
          certainty: 'explicit',
          temporal: 'past',
          is_correction: false,
          ends: true,
          source_turn: 'T0',
          valid_from: null,
          valid_to: null,
        },
      ],
      relationships: [{ source: 'Ana', target: 'Vitaly', type: 'KNOWS', properties: [{ key: 'role', value: 'boss' }], source_turn: null }],
    });
    server().reply({ text: JSON.stringify(strict) });
    const r = await make().extract(window(userId));
    const sent = server().requests.at(-1)!;
    if (provider === 'openai') {
      expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'record_memory', strict: true, schema: { type: 'object', additionalProperties: false } } });
      expect(sent).toMatchObject({ max_completion_tokens: 1000, temperature: 0 });
      expect(sent).not.toHaveProperty('max_tokens');
    } else {
      expect(sent.tools).toEqual([expect.objectContaining({ name: 'record_memory', input_schema: expect.objectContaining({ type: 'object', required: ['entities', 'facts', 'relationships'] }) })]);
      expect(sent.tool_choice).toEqual({ type: 'tool', name: 'record_memory' });
      expect(sent).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 1000 });
    }
    expect(r.repairs).toEqual([]);
    expect(r.facts[0]).toMatchObject({ relation: 'works_at', object: 'Feedzai', temporal: 'past', ends: true, sourceTurnId: 'conv-x:0' });
    expect(r.relationships[0]).toMatchObject({ type: 'KNOWS', properties: { role: 'boss' } });
  });

  it.each([
    [
      'a schema violation',
      { text: JSON.stringify({ entities: [], facts: [{ claim: 'x', subject: 'Ana', relation: 'likes', polarity: 'maybe' }], relationships: [] }) },
      /wrong types at facts\.0\.polarity/,
    ],
    ['a refusal', { text: '', refusal: "I can't help with that." }, /the model refused: I can't help with that/],
    ['an answer cut off at the token cap', { text: '{"entities": [', truncated: true }, /cut off at 1000 output tokens/],
  ])('rejects %s whole and records the paid call', async (_label, reply, reason) => {
    const userId = uid('u');
    server().reply(reply);
    await expect(make().extract(window(userId))).rejects.toThrow(reason);
    expect((await usageRows(userId))[0]).toMatchObject({ ok: false, error: expect.stringMatching(reason) });
  });

  it.each([
    ['invalid JSON', '{"entities": [{"name": "Ana",', /invalid JSON/],
    ['wrong types', JSON.stringify({ entities: [{ name: 'Ana' }], facts: [{ claim: ['not', 'a', 'string'], subject: 'Ana', relation: 'x' }] }), /wrong types/],
    ['an empty answer', '', /empty answer/],
    ['only thinking', '<think>hmm, let me see', /unterminated <think>/],
  ])('rejects %s with a logged reason and records the paid call', async (_label, text, reason) => {
    const userId = uid('u');
    server().reply({ text });
    warnings.length = 0;
    await expect(make().extract(window(userId))).rejects.toThrow(ExtractionRejectedError);
    expect(warnings.some((w) => w.msg === 'rejected extraction output' && reason.test(String(w.reason)))).toBe(true);
    const rows = await usageRows(userId);
    expect(rows).toHaveLength(1);
    expect(rows[0].ok).toBe(false);
    expect(rows[0].error).toMatch(reason);
  });

  it('surfaces an API failure as an upstream error', async () => {
    const userId = uid('u');
    server().reply({ status: 500, message: 'overloaded' });
    const err = await make()
      .extract(window(userId))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MnemographError);
    expect(err).toMatchObject({ code: 'EXTRACTION_FAILED', category: 'upstream' });
    expect((await usageRows(userId))[0]).toMatchObject({ ok: false, input_tokens: 0 });
  });
});

describe('request shapes for current model families', () => {
  const opts = (model: string) => ({ model, apiKey: 'sk-test', baseUrl: openai.baseUrl, timeoutMs: 5000, maxOutputTokens: 800, maxRetries: 0, log });
  const empty = '{"entities":[],"facts":[],"relationships":[]}';

  it.each(['o4-mini', 'gpt-5-mini', 'o3'])('OpenAI reasoning model %s: max_completion_tokens and no temperature', async (model) => {
    openai.reply({ text: empty });
    await new OpenAIExtractor('openai', opts(model)).extract(window(uid('u')));
    const sent = openai.requests.at(-1)!;
    expect(sent).toMatchObject({ model, max_completion_tokens: 800 });
    expect(sent).not.toHaveProperty('temperature');
    expect(sent).not.toHaveProperty('max_tokens');
    expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } });
  });

  it('an OpenAI-compatible server gets max_tokens, and JSON mode when structured output is switched off', async () => {
    openai.reply({ text: empty });
    await new OpenAIExtractor('openai-compatible', { ...opts('qwen2.5-7b-instruct'), structuredOutput: false }).extract(window(uid('u')));
    const sent = openai.requests.at(-1)!;
    expect(sent).toMatchObject({ max_tokens: 800, temperature: 0, response_format: { type: 'json_object' } });
    expect(sent).not.toHaveProperty('max_completion_tokens');
  });
});
