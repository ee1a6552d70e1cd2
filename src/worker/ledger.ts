import { createHash } from 'node:crypto';
import type { Queryable } from '../infra/postgres';

// $1 keys -> the keys already applied
const APPLIED = 'SELECT item_key FROM consolidation_ledger WHERE item_key = ANY($1)';
// $1 key, $2 user, $3 source -> records one applied item (a repeat is a no-op)
const MARK = 'INSERT INTO consolidation_ledger (item_key, user_id, source_id) VALUES ($1, $2, $3) ON CONFLICT (item_key) DO NOTHING';
// $1 cutoff -> deletes rows applied before it
const PRUNE = 'DELETE FROM consolidation_ledger WHERE applied_at < $1';

/**
 * Which knowledge items a consolidation already wrote, so a rerun after a crash skips
 * them instead of reinforcing them twice. Written outside any Postgres transaction of the
 * caller: it mirrors Neo4j writes, which no Postgres rollback undoes.
 */
export class ConsolidationLedger {
  constructor(private readonly pg: Queryable) {}

  async applied(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    return new Set((await this.pg.query<{ item_key: string }>(APPLIED, [keys])).rows.map((r) => r.item_key));
  }

  async mark(key: string, userId: string, sourceId: string): Promise<void> {
    await this.pg.query(MARK, [key, userId, sourceId]);
  }

  async prune(before: Date): Promise<number> {
    return (await this.pg.query(PRUNE, [before])).rowCount ?? 0;
  }
}

/** A stable key (and id-safe hash) for one item of one source. */
export function itemKey(parts: Array<string | undefined>): string {
  return createHash('sha256').update(parts.map((p) => (p ?? '').toLowerCase().trim()).join('\u0000')).digest('hex').slice(0, 32);
}
