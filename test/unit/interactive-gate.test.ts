import { InteractiveGate } from '../../src/infra/interactive-gate';
import { BackgroundEmbedder } from '../../src/episodic/background-embedder';
import { createLogger } from '../../src/infra/logger';
import type { Embedder } from '../../src/embedding';

describe('InteractiveGate', () => {
  it('idle() resolves at once when nothing interactive runs, else when the last call leaves', async () => {
    const gate = new InteractiveGate();
    await gate.idle(10_000);
    const leaveA = gate.enter();
    const leaveB = gate.enter();
    let idle = false;
    const waiting = gate.idle(10_000).then(() => (idle = true));
    leaveA();
    leaveA(); // idempotent: one call leaves once
    await new Promise((r) => setImmediate(r));
    expect([idle, gate.busy]).toEqual([false, 1]);
    leaveB();
    await waiting;
    expect([idle, gate.busy]).toEqual([true, 0]);
  });

  it('idle() waits for a quiet period after the last call: a call of the same burst restarts it', async () => {
    const gate = new InteractiveGate(40);
    const t0 = performance.now();
    gate.enter()();
    const waiting = gate.idle(10_000);
    // A second call starts 20 ms after the first left (as an agent's recall follows its storeTurn).
    await new Promise((r) => setTimeout(r, 20));
    const leave = gate.enter();
    await new Promise((r) => setTimeout(r, 20));
    leave();
    const left = performance.now();
    await waiting;
    // Idle only 40 ms after the second call left, not 40 ms after the first.
    expect(performance.now() - left).toBeGreaterThanOrEqual(38);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(78);
  });

  it('a wait is bounded: background work is delayed, never starved', async () => {
    const gate = new InteractiveGate();
    gate.enter();
    const t0 = performance.now();
    await gate.idle(50);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
  });

  it('by default a wait lasts up to one second while interactive calls keep coming', async () => {
    jest.useFakeTimers();
    try {
      const gate = new InteractiveGate();
      const leave = gate.enter();
      let idle = false;
      const waiting = gate.idle().then(() => (idle = true));
      await jest.advanceTimersByTimeAsync(990);
      expect(idle).toBe(false);
      await jest.advanceTimersByTimeAsync(20);
      await waiting;
      expect([idle, gate.busy]).toEqual([true, 1]);
      leave();
    } finally {
      jest.useRealTimers();
    }
  });

  it('the background embedder takes no batch while an interactive call runs', async () => {
    const gate = new InteractiveGate();
    const items = [{ id: 'a', content: 'x' }];
    const reads: number[] = [];
    const embedder = { provider: 'test', model: 'test', dimensions: 1, embed: async (t: string[]) => t.map(() => [1]), close: async () => undefined } as unknown as Embedder;
    const bg = new BackgroundEmbedder({ pending: async () => (reads.push(gate.busy), items.splice(0)), text: (p) => p.content, save: async (rows) => rows.length }, embedder, createLogger('silent'), {
      batchSize: 8,
      pollMs: 60_000,
      batchesPerRound: 1,
      gate,
    });
    const leave = gate.enter();
    const drained = bg.drain();
    await new Promise((r) => setTimeout(r, 30));
    expect(reads).toEqual([]);
    leave();
    expect(await drained).toBe(1);
    expect(reads.every((busy) => busy === 0)).toBe(true);
  });
});
