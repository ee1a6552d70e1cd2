import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** What a worker thread reports of its scheduling: its kernel thread id and nice value. */
export interface LaneReport {
  tid?: number;
  nice: number;
  /** Why the nice value could not be set (not Linux, no permission); the thread runs at the process's. */
  error?: string;
}

/**
 * How many nice steps below the process background threads run (the embedder's background
 * lanes, the rules extractor): under load the kernel gives the request path the cores first.
 * Within this process only: with autogroup scheduling (Linux's default on most distributions,
 * `/proc/sys/kernel/sched_autogroup_enabled`), a nice value ranks a thread against the threads
 * of its own session, and the local Neo4j runs in a session of its own, so against Neo4j's
 * threads a background lane competes as its whole process does (docs/recall-tuning.md, session 30).
 */
export const BACKGROUND_NICE = 10;

/** The highest nice value (the lowest priority) the kernel takes. */
const MAX_NICE = 19;

/**
 * Lowers the calling thread's CPU priority by `by` nice steps below what it inherited from the
 * process (at most to 19). Linux: a thread is a task of its own, and setpriority on its id
 * changes that thread only, so the process's other threads keep theirs. The model runs
 * inference on the calling thread (one intra-op thread), so this is the priority the
 * embedding work runs at. Best effort: where it cannot (not Linux, not permitted), the report
 * says why and the thread runs at the process's priority.
 */
export function lowerThreadPriority(by: number): LaneReport {
  let tid: number | undefined;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (by > 0) setPriority(tid, Math.min(MAX_NICE, threadNice(tid) + by));
    return { tid, nice: threadNice(tid) };
  } catch (err) {
    return { tid, nice: 0, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The nice value of one thread of this process (field 19 of /proc/self/task/<tid>/stat). */
export function threadNice(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[16]);
}
