import express from 'express';
import { jsonBody, nestsDeeperThan, rehearseJsonBody } from '../../src/api/body';
import { MAX_DEPTH, TimestampSchema, WindowHoursSchema, parseInput, unstorable, windowStart } from '../../src/schemas';
import { TurnInputSchema } from '../../src/episodic/schema';

describe('what no store can hold is refused by validation (issue #22)', () => {
  it('timestamps: offsets within ±18:00, years 1-9999 in UTC after the offset', () => {
    const ok = (s: string) => TimestampSchema.safeParse(s).success;
    expect(ok('2024-05-01T10:00:00+18:00')).toBe(true);
    expect(ok('2024-05-01T10:00:00-18:00')).toBe(true);
    expect(ok('0001-01-01T00:00:00Z')).toBe(true);
    expect(ok('9999-12-31T23:59:59Z')).toBe(true);
    expect(ok('2024-05-01T10:00:00+18:01')).toBe(false);
    expect(ok('2024-05-01T10:00:00+23:59')).toBe(false);
    expect(ok('0000-06-01T00:00:00Z')).toBe(false);
    expect(ok('9999-12-31T23:59:59-14:00')).toBe(false);
    expect(ok('0001-01-01T00:30:00+01:00')).toBe(false);
  });

  it('time windows are bounded, and the earliest window start is year 1', () => {
    expect(WindowHoursSchema.safeParse(1e300).success).toBe(false);
    expect(WindowHoursSchema.safeParse(24 * 365 * 100).success).toBe(true);
    expect(windowStart(24 * 365 * 100, Date.parse('0001-06-01T00:00:00Z'))).toBe('0001-01-01T00:00:00.000Z');
  });

  it('NUL, lone surrogates and deep nesting anywhere in an input, keys included; paired surrogates are fine', () => {
    expect(unstorable({ a: ['x', { b: 'y\u0000' }] })).toEqual({ path: 'a.1.b', message: expect.stringContaining('NUL') });
    expect(unstorable({ m: { ['k\u0000']: 1 } })).toEqual({ path: 'm', message: expect.stringContaining('key') });
    expect(unstorable({ s: 'a\ud800' })?.message).toContain('surrogate');
    expect(unstorable({ s: '\udc00b' })?.message).toContain('surrogate');
    expect(unstorable({ s: 'emoji 😀 ok' })).toBeUndefined();
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_DEPTH; i++) deep = [deep];
    expect(unstorable(deep)).toBeUndefined();
    deep = [deep];
    expect(unstorable(deep)?.message).toContain('deeper');
    // A cycle or shared subtree is visited once.
    const shared: Record<string, unknown> = { x: 1 };
    shared.self = shared;
    expect(unstorable({ a: shared, b: shared })).toBeUndefined();
  });

  it('parseInput refuses such input with a ValidationError naming the field, before the schema runs', () => {
    expect(() => parseInput(TurnInputSchema, { userId: 'u', conversationId: 'c', role: 'user', content: 'a', model: 'm\u0000' }, 'turn')).toThrow(/model must not contain the NUL/);
  });

  it('the body scan counts brackets outside strings only', () => {
    const buf = (s: string) => Buffer.from(s, 'utf8');
    expect(nestsDeeperThan(buf('[[[]]]'), 3)).toBe(false);
    expect(nestsDeeperThan(buf('[[[[]]]]'), 3)).toBe(true);
    expect(nestsDeeperThan(buf('{"a":"[[[[[[\\"[[[[","b":[1]}'), 3)).toBe(false);
    expect(nestsDeeperThan(buf(`{"s":"é ü 😀 [[[["}`), 1)).toBe(false);
  });

  it("warm-up's body rehearsal runs the API's JSON parser over a body in memory, and says when it fails", async () => {
    let parsed: unknown;
    const parser: express.RequestHandler = (req, res, next) =>
      jsonBody('1mb')(req, res, (err?: unknown) => {
        parsed = (req as { body?: unknown }).body;
        next(err);
      });
    await expect(rehearseJsonBody(parser)).resolves.toBeUndefined();
    expect(parsed).toEqual({ rehearsal: true });
    await expect(rehearseJsonBody(jsonBody('5b'))).rejects.toThrow(/too large/);
  });
});
