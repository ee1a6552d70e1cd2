import type { CypherRunner } from '../infra/neo4j';
import type { Logger } from '../infra/logger';
import { errorMessage } from '../errors';
import type { RecallItemKind, Reinforcer } from './contract';

type Kind = 'turn' | RecallItemKind;

// One query per label (labels cannot be parameters). Each: $rows: [{id, userId, n, at}] -> {n}.
// The user check keeps a forged id from touching someone else's node.
const bump = (label: string) => `
UNWIND $rows AS r
MATCH (n:${label} {id: r.id}) WHERE n.user_id = r.userId
SET n.access_count = coalesce(n.access_count, 0) + r.n,
    n.last_accessed = CASE WHEN n.last_accessed IS NULL OR n.last_accessed < datetime(r.at) THEN datetime(r.at) ELSE n.last_accessed END
RETURN count(n) AS n`;
const BUMP: Record<Kind, string> = { turn: bump('Turn'), fact: bump('Fact'), entity: bump('Entity'), strategy: bump('Strategy'), goal: bump('Goal') };

/**
 * Reinforcement off the request path: `record` only counts in memory; a timer (or a full
 * queue) writes the counts in one UNWIND per label. Best effort by design: a failed batch is
 * logged and dropped, because access counts are a ranking hint, not data.
 */
export class Neo4jReinforcer implements Reinforcer {
  private pending = new Map<Kind, Map<string, { id: string; userId: string; n: number; at: string }>>();
  private size = 0;
  private running: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: CypherRunner,
    private readonly log: Logger,
    private readonly opts: { intervalMs?: number; maxQueued?: number } = {},
  ) {
    this.timer = setInterval(() => void this.flush(), opts.intervalMs ?? 1_000);
    this.timer.unref();
  }

  record(userId: string, items: Array<{ kind: Kind; id: string }>): void {
    const at = new Date().toISOString();
    for (const { kind, id } of items) {
      let byId = this.pending.get(kind);
      if (!byId) this.pending.set(kind, (byId = new Map()));
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
        await this.db.write(BUMP[kind], { rows: [...rows.values()] }, { subsystem: 'retrieval', op: `reinforce.${kind}` });
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
