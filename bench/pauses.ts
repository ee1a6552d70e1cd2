import { execFileSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';

/** A span of time on `performance.now()`'s clock (ms). */
export interface Span {
  start: number;
  ms: number;
}

/**
 * Collects this process's garbage-collection pauses (V8 on the main thread, as `perf_hooks`
 * reports them) until the returned function is called, which gives them back.
 */
export function mainThreadGc(): () => Span[] {
  const pauses: Span[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, ms: e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    return pauses;
  };
}

/** A JVM's collections and their pause time so far (`jstat -gc`: YGC + FGC + CGC, GCT), or undefined when jstat cannot tell. */
function jvmGc(pid: number): { count: number; ms: number } | undefined {
  try {
    const [head, values] = execFileSync('jstat', ['-gc', String(pid)], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    const at = (name: string) => Number(values![head!.indexOf(name)] ?? 0);
    return { count: at('YGC') + at('FGC') + at('CGC'), ms: at('GCT') * 1000 };
  } catch {
    return undefined;
  }
}

/** Starts counting a JVM's (Neo4j's) collections; the returned function gives those since, or undefined without jstat or a pid. */
export function jvmGcMeter(pid: number | undefined): () => { collections: number; pause_ms: number } | undefined {
  const before = pid === undefined ? undefined : jvmGc(pid);
  return () => {
    const after = before && jvmGc(pid!);
    return after ? { collections: after.count - before.count, pause_ms: Math.round(after.ms - before.ms) } : undefined;
  };
}

/** Count, total and largest of a set of pauses (ms). */
export function pauseSummary(pauses: Span[]): { count: number; total_ms: number; max_ms: number } {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { count: pauses.length, total_ms: round(pauses.reduce((s, p) => s + p.ms, 0)), max_ms: round(Math.max(0, ...pauses.map((p) => p.ms))) };
}

/**
 * How much of the calls' time the pauses took: for the slowest tenth of the calls and for the
 * faster half, the share of calls a pause overlapped and the pause time inside a call on
 * average (ms). Where the slow calls meet pauses far more often than the fast ones, the pauses
 * are a cause of the tail.
 */
export function pausesInCalls(calls: Span[], pauses: Span[]): Record<'slowest_tenth' | 'fastest_half', { calls: number; share_with_pause: number; pause_ms_per_call: number }> {
  const inside = (c: Span) => pauses.reduce((sum, p) => sum + Math.max(0, Math.min(c.start + c.ms, p.start + p.ms) - Math.max(c.start, p.start)), 0);
  const byTime = [...calls].sort((a, b) => a.ms - b.ms);
  const describe = (group: Span[]) => {
    const overlaps = group.map(inside);
    const n = Math.max(1, group.length);
    return {
      calls: group.length,
      share_with_pause: Math.round((overlaps.filter((ms) => ms > 0).length / n) * 100) / 100,
      pause_ms_per_call: Math.round((overlaps.reduce((s, ms) => s + ms, 0) / n) * 10) / 10,
    };
  };
  return {
    slowest_tenth: describe(byTime.slice(Math.floor(byTime.length * 0.9))),
    fastest_half: describe(byTime.slice(0, Math.floor(byTime.length / 2))),
  };
}
