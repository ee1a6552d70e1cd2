import * as z from 'zod';

/*
 * The wire contract of per-tier statistics: zod only (the HTTP client bundles it for browsers).
 */

/** Per-tier counts of one user (seed 001 router stats). */
export const TierStatsSchema = z
  .object({
    userId: z.string(),
    working: z.object({ keys: z.number().int() }),
    shortTerm: z.object({ entries: z.number().int(), expired: z.number().int(), sessions: z.number().int(), promoted: z.number().int() }),
    longTerm: z.object({ episodic: z.number().int(), semantic: z.number().int(), procedural: z.number().int(), goals: z.number().int(), total: z.number().int() }),
    shared: z.record(z.string(), z.number()).nullable().describe('memory pools the caller may read: pools and active entries (null without a pool counter)'),
  })
  .meta({ id: 'TierStats' });
export type TierStats = z.output<typeof TierStatsSchema>;
