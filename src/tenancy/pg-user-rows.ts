import { ValidationError } from '../errors';
import type { Queryable } from '../infra/postgres';
import type { AgentView, ErasureReport, ExportLine, ImportCounts, UserDataPart, UserStats } from './user-data';

// -> {table, columns: [{name, generated}]}: user-owned tables (a user_id column), partitions excluded
const USER_TABLES = `
SELECT cl.relname AS table,
       json_agg(json_build_object('name', a.attname, 'generated', a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid), '') LIKE 'nextval(%')
                ORDER BY a.attnum) AS columns
FROM pg_class cl
JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = cl.oid AND d.adnum = a.attnum
WHERE cl.relnamespace = current_schema()::regnamespace AND cl.relkind IN ('r', 'p') AND NOT cl.relispartition
GROUP BY cl.relname
HAVING bool_or(a.attname = 'user_id')
ORDER BY cl.relname`;

interface TableInfo {
  table: string;
  columns: Array<{ name: string; generated: boolean }>;
}

/** Every table of the schema with a `user_id` column and its columns, from the catalog, by name. */
export async function userTables(pg: Queryable): Promise<TableInfo[]> {
  return (await pg.query<TableInfo>(USER_TABLES)).rows;
}

/**
 * A store's user-owned Postgres tables as a UserDataPart: the rows whose `user_id` is the
 * user's. The owning store names its tables (see its `userData()`); the statements are
 * built from the catalog's names, one per table, with the user as a parameter. A store whose
 * rows are private to the agent that wrote them names that column (`agentColumn`): an
 * agent's view (AgentView) holds only its own rows.
 */
export class PgUserRows implements UserDataPart {
  constructor(
    private readonly pg: Queryable,
    readonly kind: string,
    readonly tables: readonly string[],
    private readonly opts: { agentColumn?: string } = {},
  ) {}

  /** The rows of a table a view sees: the user's, and with an agent-private column only that agent's ($2). */
  private visible(view: AgentView | undefined): { where: string; params: (userId: string) => unknown[] } {
    const col = this.opts.agentColumn;
    if (!view || !col) return { where: 'user_id = $1', params: (u) => [u] };
    return { where: `user_id = $1 AND ${quoteSql(col)} = $2`, params: (u) => [u, view.agentId] };
  }

  owns(line: ExportLine): boolean {
    return line.kind === 'row' && this.tables.includes(line.table);
  }

  async stats(userId: string, into: UserStats, view?: AgentView): Promise<void> {
    const v = this.visible(view);
    for (const t of await this.catalog()) {
      const n = Number((await this.pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteSql(t.table)} WHERE ${v.where}`, v.params(userId))).rows[0]!.n);
      if (n > 0) into.rows[t.table] = n;
    }
  }

  async *export(userId: string, view?: AgentView): AsyncGenerator<ExportLine> {
    const v = this.visible(view);
    for (const t of await this.catalog()) {
      const keep = t.columns.filter((c) => !c.generated).map((c) => c.name);
      const res = await this.pg.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM ${quoteSql(t.table)} t WHERE ${v.where}`, v.params(userId));
      for (const { row } of res.rows) yield { kind: 'row', table: t.table, row: Object.fromEntries(keep.map((c) => [c, row[c] ?? null])) };
    }
  }

  async check(lines: ExportLine[], userId: string): Promise<void> {
    for (const r of lines) {
      if (r.kind === 'row' && r.row.user_id !== userId) throw new ValidationError(`invalid import: a ${r.table} row belongs to ${String(r.row.user_id)}, not ${userId}`);
    }
  }

  async import(lines: ExportLine[], progress: (done: number) => void): Promise<ImportCounts> {
    const tables = new Map((await this.catalog()).map((t) => [t.table, t]));
    let rowCount = 0;
    for (const r of lines) {
      if (r.kind !== 'row') continue;
      const t = tables.get(r.table);
      if (!t) throw new ValidationError(`invalid import: unknown table ${r.table}`);
      const cols = t.columns.filter((c) => !c.generated && c.name in r.row).map((c) => quoteSql(c.name));
      const sql = `INSERT INTO ${quoteSql(t.table)} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM jsonb_populate_record(NULL::${quoteSql(t.table)}, $1::jsonb) ON CONFLICT DO NOTHING`;
      rowCount += (await this.pg.query(sql, [JSON.stringify(r.row)])).rowCount ?? 0;
      progress(rowCount);
    }
    return { nodes: 0, relationships: 0, rows: rowCount };
  }

  async erase(userId: string, report: ErasureReport): Promise<void> {
    for (const t of await this.catalog()) {
      const n = (await this.pg.query(`DELETE FROM ${quoteSql(t.table)} WHERE user_id = $1`, [userId])).rowCount ?? 0;
      if (n > 0) report.rowsDeleted[t.table] = (report.rowsDeleted[t.table] ?? 0) + n;
    }
  }

  /** This part's tables that exist with a user_id column, by name. */
  private async catalog(): Promise<TableInfo[]> {
    return (await userTables(this.pg)).filter((t) => this.tables.includes(t.table));
  }
}

/** Table and column names come from the catalog; quoted all the same. */
function quoteSql(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
