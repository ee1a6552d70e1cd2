import { cronField, hourlySlots, jobTimetable } from '../../bench/lifetime-schedule';
import { spread } from '../../bench/lifetime-deletion';
import { DEFAULT_SCHEDULES } from '../../src/worker';

describe("bench:lifetime's timetable", () => {
  it('reads the cron fields the worker schedules use', () => {
    expect(cronField('*/15', 60)).toEqual([0, 15, 30, 45]);
    expect(cronField('7', 60)).toEqual([7]);
    expect(cronField('1-3,10', 24)).toEqual([1, 2, 3, 10]);
    expect(hourlySlots('45 3 * * *')).toEqual(new Map([[3, 45]]));
    expect(hourlySlots('*/10 * * * *').size).toBe(24);
    expect(() => hourlySlots('0 4 * * 1')).toThrow(/minute and hour only/);
  });

  it('runs daily jobs once a day at their time and hourly ones every hour (or every n hours), in time order', () => {
    const start = new Date('2027-01-01T00:00:00Z');
    const runs = jobTimetable(DEFAULT_SCHEDULES, start, 2);
    const count = (job: string) => runs.filter((r) => r.job === job).length;
    expect(count('decay')).toBe(2);
    expect(count('consolidate')).toBe(48);
    expect(count('promote')).toBe(48);
    expect(runs.find((r) => r.job === 'cleanup')!.at.toISOString()).toBe('2027-01-01T03:45:00.000Z');
    expect(runs.map((r) => r.at.getTime())).toEqual([...runs.map((r) => r.at.getTime())].sort((a, b) => a - b));
    expect(jobTimetable(DEFAULT_SCHEDULES, start, 2, 6).filter((r) => r.job === 'promote')).toHaveLength(8);
  });

  it('spreads a deterministic sample over the whole list', () => {
    expect(spread([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3)).toEqual([0, 3, 6]);
    expect(spread([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3, 0.5)).toEqual([1, 5, 8]);
    expect(spread([1, 2], 5)).toEqual([1, 2]);
  });
});
