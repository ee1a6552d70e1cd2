import type { JobName } from '../src/worker';

/**
 * The simulated year's timetable, from the worker's own cron expressions (DEFAULT_SCHEDULES,
 * or the configured ones). The year is a sequence of hourly ticks; in each hour a job runs
 * at the first minute its expression fires in that hour. Jobs due more often than hourly
 * (consolidate every 15 min, short_term every 10) therefore run once an hour: between two of
 * their runs nothing new is written (the bench stores nothing during the year), and each job
 * is idempotent, so their other runs of the hour would find nothing to do.
 *
 * Only the minute and hour fields are read (`*`, `*∕n`, `n`, `a-b`, lists); the year's
 * schedules leave day, month and weekday at `*`, which `jobTimetable` checks.
 */

export interface TickRun {
  /** When the job runs (the fake clock is set to it). */
  at: Date;
  job: JobName;
}

/** The values 0..max-1 a cron field matches. */
export function cronField(field: string, max: number): number[] {
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    const [lo, hi] = range === '*' ? [0, max - 1] : range!.includes('-') ? range!.split('-').map(Number) : [Number(range), stepText === undefined ? Number(range) : max - 1];
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || !Number.isInteger(step) || step < 1) throw new Error(`unsupported cron field "${field}"`);
    for (let v = lo!; v <= hi!; v += step) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

/** A job's first minute in each hour of the day it fires (hour -> minute). */
export function hourlySlots(expr: string): Map<number, number> {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5 || fields.slice(2).some((f) => f !== '*')) throw new Error(`the year's timetable reads minute and hour only; "${expr}" sets day, month or weekday`);
  const minutes = cronField(fields[0]!, 60);
  return new Map(cronField(fields[1]!, 24).map((h) => [h, minutes[0]!]));
}

/**
 * Every job run of `days` days from `start` (a UTC midnight), in time order; a job that runs
 * every hour runs every `everyHours` hours instead (1: as scheduled).
 */
export function jobTimetable(schedules: Partial<Record<JobName, string>>, start: Date, days: number, everyHours = 1): TickRun[] {
  const slots = Object.entries(schedules).map(([job, expr]) => ({ job: job as JobName, slots: hourlySlots(expr) }));
  const runs: TickRun[] = [];
  for (let hour = 0; hour < days * 24; hour++) {
    const hourOfDay = hour % 24;
    const due = slots
      .filter((s) => s.slots.has(hourOfDay) && (s.slots.size < 24 || hour % everyHours === 0))
      .map((s) => ({ job: s.job, minute: s.slots.get(hourOfDay)! }))
      .sort((a, b) => a.minute - b.minute);
    for (const d of due) runs.push({ job: d.job, at: new Date(start.getTime() + hour * 3_600_000 + d.minute * 60_000) });
  }
  return runs;
}
