import { BACKGROUND_NICE, threadNice } from '../../src/infra/thread-priority';
import { createExtractor, RulesExtractor, RulesThreadExtractor, type ExtractionConfig, type ExtractionResult, type ExtractionWindow } from '../../src/extraction';
import { createLogger } from '../../src/infra/logger';
import { MnemographError } from '../../src/errors';

const at = '2023-05-08T12:00:00.000Z';
const window = (lines: string[], speaker: string): ExtractionWindow => ({
  userId: 'u',
  channel: '_global',
  conversationId: 'c',
  turns: lines.map((content, i) => ({ id: `c:${i}`, role: 'user', content, timestamp: at, speaker })),
});
// Everything but how long it took.
const comparable = (r: ExtractionResult) => ({ ...r, usage: { ...r.usage, latencyMs: 0 } });

const windows = [
  window(['My sister Alice moved to Berlin last year and I work at Acme Corp.', 'We hiked in Yosemite National Park with John Smith.'], 'Bob'),
  window(['I used to live in Boston.', "I'm going to work at Stripe next month.", 'I hate cilantro.', 'My boss is Vitaly.'], 'Dana'),
  window(['I left Feedzai in March.', 'Actually, I meant Lisbon, not Porto.'], 'Eve'),
];

describe('the rules extractor on its own thread', () => {
  const threaded = new RulesThreadExtractor();
  afterAll(() => threaded.close());

  it('gives what the rules give on the main thread, each window its own answer when several are under way', async () => {
    const inline = new RulesExtractor();
    const expected = await Promise.all(windows.map((w) => inline.extract(w)));
    const got = await Promise.all(windows.map((w) => threaded.extract(w)));
    expect(got.map(comparable)).toEqual(expected.map(comparable));
    expect(got[0]!.facts.length + got[1]!.facts.length).toBeGreaterThan(0);
    expect(threaded).toMatchObject({ provider: 'rules', model: inline.model });
  });

  it('runs on a thread of its own, BACKGROUND_NICE steps below the process', async () => {
    const report = await threaded.threadReport();
    expect(report.error).toBeUndefined();
    expect(report.tid).not.toBe(process.pid);
    // Relative to the process's own priority (CI may run the whole suite niced).
    expect(threadNice(report.tid!)).toBe(Math.min(19, threadNice(process.pid) + BACKGROUND_NICE));
  });

  it('fails the windows under way when its thread dies, and starts a new one for the next', async () => {
    const dying = new RulesThreadExtractor();
    await dying.extract(windows[0]!);
    // Long enough (~40 windows' worth of rules) to be under way when the thread stops.
    const long = window(Array.from({ length: 40 }, () => windows.flatMap((w) => w.turns.map((t) => t.content))).flat(), 'Bob');
    const underWay = dying.extract(long);
    // The thread stops as an out-of-memory kill or a native crash would stop it.
    await (dying as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await expect(underWay).rejects.toMatchObject({ code: 'EXTRACTION_FAILED' });
    expect(comparable(await dying.extract(windows[1]!))).toEqual(comparable(await new RulesExtractor().extract(windows[1]!)));
    await dying.close();
  });

  it('is what the composition root gets for EXTRACTION_PROVIDER=rules', async () => {
    const configured = createExtractor({ provider: 'rules' } as ExtractionConfig, { log: createLogger('silent') });
    expect(configured).toBeInstanceOf(RulesThreadExtractor);
    await configured.close?.();
  });

  it('refuses windows once closed, with a typed error', async () => {
    const closing = new RulesThreadExtractor();
    await closing.extract(windows[0]!);
    await closing.close();
    await expect(closing.extract(windows[0]!)).rejects.toThrow(MnemographError);
    await expect(closing.extract(windows[0]!)).rejects.toMatchObject({ code: 'EXTRACTION_FAILED' });
  });
});
