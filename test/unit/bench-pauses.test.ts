import { pauseSummary, pausesInCalls } from '../../bench/pauses';

describe('bench pauses: garbage collection inside the measured calls', () => {
  // Ten calls of 10..100 ms, one after the other; the slowest (100 ms, 450-550) holds a 20 ms
  // pause, the fastest (10 ms, 0-10) a 4 ms pause, and one pause falls after the calls.
  const calls = Array.from({ length: 10 }, (_, i) => ({ start: (i * (i + 1) * 10) / 2, ms: (i + 1) * 10 }));
  const pauses = [
    { start: 500, ms: 20 },
    { start: 4, ms: 4 },
    { start: 10_000, ms: 50 },
  ];

  it('counts the share of the slowest tenth and of the faster half a pause overlapped, and the pause time inside them', () => {
    expect(pausesInCalls(calls, pauses)).toEqual({
      slowest_tenth: { calls: 1, share_with_pause: 1, pause_ms_per_call: 20 },
      fastest_half: { calls: 5, share_with_pause: 0.2, pause_ms_per_call: 0.8 },
    });
  });

  it('a pause across two calls counts in both', () => {
    const across = pausesInCalls(calls, [{ start: 8, ms: 4 }]).fastest_half;
    expect(across).toEqual({ calls: 5, share_with_pause: 0.4, pause_ms_per_call: 0.8 });
  });

  it('calls without pauses show none', () => {
    expect(pausesInCalls(calls, [])).toEqual({
      slowest_tenth: { calls: 1, share_with_pause: 0, pause_ms_per_call: 0 },
      fastest_half: { calls: 5, share_with_pause: 0, pause_ms_per_call: 0 },
    });
  });

  it('sums pauses', () => {
    expect(pauseSummary(pauses)).toEqual({ count: 3, total_ms: 74, max_ms: 50 });
    expect(pauseSummary([])).toEqual({ count: 0, total_ms: 0, max_ms: 0 });
  });
});
