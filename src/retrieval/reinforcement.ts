import type { EpisodicStore } from '../episodic/contract';
import type { GoalStore } from '../goals/contract';
import type { AccessCount } from '../infra/access-count';
import type { Logger } from '../infra/logger';
import type { ProceduralStore } from '../procedural/contract';
import type { SemanticStore } from '../semantic/contract';
import { errorMessage } from '../errors';
import type { RecallItemKind, Reinforcer } from './contract';

type Kind = 'turn' | RecallItemKind;

/** The stores that own what recall returns; each writes the access counts of its labels. */
export interface AccessCountWriters {
  episodic: Pick<EpisodicStore, 'addAccessCounts'>;
  semantic: Pick<SemanticStore, 'addAccessCounts'>;
  procedural: Pick<ProceduralStore, 'addAccessCounts'>;
  goals: Pick<GoalStore, 'addAccessCounts'>;
  /** Pool entries (src/pools); without it their recalls are not counted. */
  pools?: { addAccessCounts(rows: Array<{ id: string; n: number; at: string }>): Promise<number> };
}

/**
 * Reinforcement off the request path: `record` only counts in memory; a timer (or a full
 * queue) writes the counts through the owning stores, one UNWIND per label. Best effort by design: a failed batch is
 * logged and dropped, because access counts are a ranking hint, not data.
 */
export class StoreReinforcer implements Reinforcer {
  private pending = new Map<Kind, Map<string, AccessCount>>();
  private readonly write: Record<Kind, (rows: AccessCount[]) => Promise<number>>;
  private size = 0;
  private running: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    stores: AccessCountWriters,
    private readonly log: Logger,
    private readonly opts: { intervalMs?: number; maxQueued?: number } = {},
  ) {
    this.write = {
      turn: (rows) => stores.episodic.addAccessCounts(rows),
      fact: (rows) => stores.semantic.addAccessCounts('fact', rows),
      entity: (rows) => stores.semantic.addAccessCounts('entity', rows),
      strategy: (rows) => stores.procedural.addAccessCounts(rows),
      goal: (rows) => stores.goals.addAccessCounts(rows),
      pool: async (rows) => (stores.pools ? stores.pools.addAccessCounts(rows) : 0),
    };
    this.timer = setInterval(() => void this.flush(), opts.intervalMs ?? 1_000);
    this.timer.unref();
  }

  record(userId: string, items: Array<{ kind: Kind; id: string }>): void {
    const at = new Date().toISOString();
    for (const { kind, id } of items) {
      let byId = this.pending.get(kind);
      if (!byId) this.pending.set(kind, (byId = new Map<string, AccessCount>()));
      const key = `${userId}\u0000${id}`;
      const row = byId.get(key);
      if (row) {
        row.n += 1;
        row.at = at;
      } else {
        byId.set(key, { id, userId, n: 1, at });
        this.size += 1;
      }
    }
    if (this.size >= (this.opts.maxQueued ?? 2_000)) void this.flush();
  }

  async rehearse(userId: string, items: Array<{ kind: Kind; id: string }>): Promise<void> {
    const at = new Date().toISOString();
    const byKind = new Map<Kind, string[]>();
    for (const { kind, id } of items) byKind.set(kind, [...(byKind.get(kind) ?? []), id]);
    for (const [kind, ids] of byKind) for (const n of [1, 2, 11]) await this.write[kind](Array.from({ length: n }, (_, i) => ({ id: ids[i % ids.length]!, userId, n: 1, at })));
  }

  flush(): Promise<void> {
    // Serialised: one batch at a time, so counts are never written twice or out of order.
    this.running = this.running.then(() => this.writeBatch());
    return this.running;
  }

  private async writeBatch(): Promise<void> {
    if (this.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.size = 0;
    for (const [kind, rows] of batch) {
      try {
        await this.write[kind]([...rows.values()]);
      } catch (err) {
        this.log.warn({ subsystem: 'retrieval', kind, rows: rows.size, err: errorMessage(err) }, 'reinforcement batch dropped');
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
