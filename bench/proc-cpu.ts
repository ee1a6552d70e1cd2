import { readdirSync, readFileSync } from 'node:fs';

/** Milliseconds per clock tick of /proc's CPU times (USER_HZ, 100 on Linux). */
export const MS_PER_TICK = 1000 / 100;

/** A process's or thread's name and CPU clock ticks (utime + stime) from its /proc stat file; undefined when it is gone (or not Linux). */
function readStat(path: string): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** CPU ticks of a whole process (all its threads). */
export function processTicks(pid: number): number {
  return readStat(`/proc/${pid}/stat`)?.ticks ?? 0;
}

/** CPU ticks of the threads of `pid` whose name matches (threads that ended are not counted). */
export function threadTicks(pid: number, name: RegExp): number {
  let dirs: string[];
  try {
    dirs = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  return dirs.reduce((sum, tid) => {
    const t = readStat(`/proc/${pid}/task/${tid}/stat`);
    return t && name.test(t.comm) ? sum + t.ticks : sum;
  }, 0);
}

/** CPU ticks of every process of that name (PostgreSQL's backends, Redis). */
export function ticksByComm(comm: string): number {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .reduce((sum, pid) => {
      const s = readStat(`/proc/${pid}/stat`);
      return s?.comm === comm ? sum + s.ticks : sum;
    }, 0);
}
