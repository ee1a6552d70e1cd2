import type { CypherRunner } from '../infra/neo4j';
import type { Queryable } from '../infra/postgres';
import type { RedisClient } from '../infra/redis';
import { ValidationError } from '../errors';
import { SCOPED_LABELS, scopeKey } from '../infra/fulltext-scope';
import type { WorkingMemoryStore } from '../working';
import { userScope } from '../access';

const TAG = (op: string) => ({ subsystem: 'tenancy', op });

/**
 * A user's whole memory, line by line (JSON lines): a header, then Neo4j nodes, Neo4j
 * relationships and Postgres rows. Nodes carry their property types where JSON loses them
 * (integers, temporals), so an import restores an equal graph.
 */
export type ExportLine =
  | { kind: 'header'; format: 'mnemograph-user-export'; version: 1; userId: string; exportedAt: string }
  | { kind: 'node'; ref: string; labels: string[]; props: Record<string, unknown>; types: Record<string, string> }
  | { kind: 'rel'; type: string; start: NodeRef; end: NodeRef; props: Record<string, unknown>; types: Record<string, string> }
  | { kind: 'row'; table: string; row: Record<string, unknown> };

/** Either a node of the export (`ref`) or a shared node outside it, found by a unique key. */
export type NodeRef = string | { labels: string[]; key: 'id' | 'name'; value: string };

export interface UserStats {
  userId: string;
  nodes: Record<string, number>;
  rows: Record<string, number>;
  workingKeys: number;
}

export interface ErasureReport {
  userId: string;
  nodesDeleted: number;
  rowsDeleted: Record<string, number>;
  redisKeysDeleted: number;
  auditRowsDeleted: number;
}

// Rebuilds a typed property {k, t, v} (t as valueType() reported it).
const FROM_TYPED = `CASE
    WHEN d.t STARTS WITH 'INTEGER' THEN toInteger(d.v)
    WHEN d.t STARTS WITH 'LIST<INTEGER' THEN [x IN d.v | toInteger(x)]
    WHEN d.t STARTS WITH 'ZONED DATETIME' THEN datetime(d.v)
    WHEN d.t STARTS WITH 'LOCAL DATETIME' THEN localdatetime(d.v)
    WHEN d.t STARTS WITH 'DATE' THEN date(d.v)
    WHEN d.t STARTS WITH 'ZONED TIME' THEN time(d.v)
    WHEN d.t STARTS WITH 'LOCAL TIME' THEN localtime(d.v)
    WHEN d.t STARTS WITH 'DURATION' THEN duration(d.v)
    ELSE d.v END`;

// -> {label}: every node label in the database
const LABELS = 'CALL db.labels() YIELD label RETURN label';
// $userId -> {ref}: the user's node and every node owned by the user (per label, so the user_id range index is used)
const OWNED_NODES = (label: string) => `MATCH (n:${quoteName(label)}) WHERE n.user_id = $userId RETURN elementId(n) AS ref`;
// $userId -> {ref}
const USER_NODE = 'MATCH (n:User {id: $userId}) RETURN elementId(n) AS ref';
// $refs -> {ref, labels, props: [{k, t, v}]} with temporal values as strings (typed, for the round trip)
const READ_NODES = `
MATCH (n) WHERE elementId(n) IN $refs
RETURN elementId(n) AS ref, labels(n) AS labels,
  [k IN keys(n) | {k: k, t: valueType(n[k]), v: CASE WHEN ${TEMPORAL('n[k]')} THEN toString(n[k]) ELSE n[k] END}] AS props`;
// $refs, $all -> relationships leaving a node of $refs, or entering one from outside the export
const READ_RELS = `
MATCH (a)-[r]->(b) WHERE elementId(a) IN $refs OR (elementId(b) IN $refs AND NOT elementId(a) IN $all)
RETURN type(r) AS type, elementId(a) AS start, elementId(b) AS end,
  CASE WHEN elementId(a) IN $all THEN null ELSE {labels: labels(a), id: a.id, name: a.name, owner: a.user_id} END AS startShared,
  CASE WHEN elementId(b) IN $all THEN null ELSE {labels: labels(b), id: b.id, name: b.name, owner: b.user_id} END AS endShared,
  [k IN keys(r) | {k: k, t: valueType(r[k]), v: CASE WHEN ${TEMPORAL('r[k]')} THEN toString(r[k]) ELSE r[k] END}] AS props`;
// $refs -> {deleted}
const DELETE_NODES = 'MATCH (n) WHERE elementId(n) IN $refs DETACH DELETE n RETURN count(*) AS deleted';
// $rows: [{ref, id, plain, typed, embedding}] -> {ref, eid}; label literal validated by quoteName
const IMPORT_NODES = (label: string) => `
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.id IS NOT NULL
  MERGE (n:${quoteName(label)} {id: row.id}) RETURN n
  UNION
  WITH row WHERE row.id IS NULL
  CREATE (n:${quoteName(label)}) RETURN n
}
SET n:$(row.labels)
SET n += row.plain
WITH n, row
CALL (n, row) {
  UNWIND row.typed AS d
  SET n[d.k] = ${FROM_TYPED}
}
CALL (n, row) {
  WITH n, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
}
RETURN row.ref AS ref, elementId(n) AS eid`;
// $rows: [{start, end, startShared, endShared, type, plain, typed}] -> {n}
const IMPORT_RELS = `
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.start IS NOT NULL MATCH (a) WHERE elementId(a) = row.start RETURN a
  UNION
  WITH row WHERE row.start IS NULL AND row.startShared.key = 'id' MERGE (a:$(row.startShared.label) {id: row.startShared.value}) RETURN a
  UNION
  WITH row WHERE row.start IS NULL AND row.startShared.key = 'name' MERGE (a:$(row.startShared.label) {name: row.startShared.value}) RETURN a
}
CALL (row) {
  WITH row WHERE row.end IS NOT NULL MATCH (b) WHERE elementId(b) = row.end RETURN b
  UNION
  WITH row WHERE row.end IS NULL AND row.endShared.key = 'id' MERGE (b:$(row.endShared.label) {id: row.endShared.value}) RETURN b
  UNION
  WITH row WHERE row.end IS NULL AND row.endShared.key = 'name' MERGE (b:$(row.endShared.label) {name: row.endShared.value}) RETURN b
}
MERGE (a)-[r:$(row.type)]->(b)
SET r += row.plain
WITH r, row
CALL (r, row) {
  UNWIND row.typed AS d
  SET r[d.k] = ${FROM_TYPED}
}
RETURN count(*) AS n`;

function TEMPORAL(expr: string): string {
  return `any(p IN ['ZONED DATETIME', 'LOCAL DATETIME', 'DATE', 'ZONED TIME', 'LOCAL TIME', 'DURATION'] WHERE valueType(${expr}) STARTS WITH p)`;
}

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
// Tables with a user_id that are not the user's memory: the audit trail (erased apart, keeps the
// erasure record), the record of erasures (which keeps late audit rows out, sql/005) and the
// tenancy registry (its keys are external ids, handled by the caller).
const NOT_MEMORY = new Set(['memory_audit_log', 'user_erasures', 'tenant_users']);
// $1 user -> nothing: from now on, audit rows about the user timestamped before this moment are dropped
const RECORD_ERASURE = `INSERT INTO user_erasures (user_id, erased_at) VALUES ($1, NOW())
  ON CONFLICT (user_id) DO UPDATE SET erased_at = EXCLUDED.erased_at`;
// $1 user -> {n}
const DELETE_AUDIT = 'DELETE FROM memory_audit_log WHERE user_id = $1';
// $1 user, $2 metadata -> nothing: the one row that outlives an erasure
const INSERT_ERASURE = `INSERT INTO memory_audit_log (operation, memory_type, user_id, affected_ids, success, metadata)
  VALUES ('forget_user', 'system', $1, '{}', TRUE, $2)`;

interface TableInfo {
  table: string;
  columns: Array<{ name: string; generated: boolean }>;
}

/**
 * Whole-user operations across every store: statistics, export, import and erasure.
 * Generic over labels and tables (any node with `user_id`, any table with a `user_id`
 * column), so memory added by other subsystems is covered without changes here.
 */
export class UserDataStore {
  constructor(
    private readonly neo4j: CypherRunner,
    private readonly pg: Queryable,
    private readonly redis: RedisClient,
    private readonly working: WorkingMemoryStore,
    private readonly opts: {
      /** Runs first (the audit logger's flush, so queued rows about the user are written and then deleted). */
      beforeErase?: () => Promise<void>;
      /** How long after the first sweep the second runs (config ERASURE_GRACE_MS). */
      graceMs?: number;
    } = {},
  ) {}

  /** Counts of the user's nodes per label and rows per table (only non-zero entries). */
  async stats(userId: string): Promise<UserStats> {
    const nodes: Record<string, number> = {};
    for (const label of await this.labels()) {
      const n = label === 'User' ? (await this.neo4j.read(USER_NODE, { userId }, TAG('stats'))).length : (await this.neo4j.read(OWNED_NODES(label), { userId }, TAG('stats'))).length;
      if (n > 0) nodes[label] = n;
    }
    const rows: Record<string, number> = {};
    for (const t of await this.tables()) {
      const n = Number((await this.pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteSql(t.table)} WHERE user_id = $1`, [userId])).rows[0]!.n);
      if (n > 0) rows[t.table] = n;
    }
    return { userId, nodes, rows, workingKeys: (await this.redisKeys(userId)).length };
  }

  /** Streams the user's memory as export lines (working memory is ephemeral and not exported). */
  async *export(userId: string): AsyncGenerator<ExportLine> {
    yield { kind: 'header', format: 'mnemograph-user-export', version: 1, userId, exportedAt: new Date().toISOString() };
    const refs = await this.nodeRefs(userId);
    const all = [...refs];
    for (const batch of chunks(all, 500)) {
      const rows = await this.neo4j.read<{ ref: string; labels: string[]; props: TypedProp[] }>(READ_NODES, { refs: batch }, TAG('export'));
      for (const r of rows) yield { kind: 'node', ref: r.ref, labels: r.labels, ...splitTyped(r.props) };
    }
    for (const batch of chunks(all, 500)) {
      const rows = await this.neo4j.read<RelRow>(READ_RELS, { refs: batch, all }, TAG('export'));
      for (const r of rows) {
        const start = r.startShared ? sharedRef(r.startShared, userId) : r.start;
        const end = r.endShared ? sharedRef(r.endShared, userId) : r.end;
        // A link to another user's node is never exported (and should not exist).
        if (start === null || end === null) continue;
        yield { kind: 'rel', type: r.type, start, end, ...splitTyped(r.props) };
      }
    }
    for (const t of await this.tables()) {
      const keep = t.columns.filter((c) => !c.generated).map((c) => c.name);
      const res = await this.pg.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) AS row FROM ${quoteSql(t.table)} t WHERE user_id = $1`, [userId]);
      for (const { row } of res.rows) yield { kind: 'row', table: t.table, row: Object.fromEntries(keep.map((c) => [c, row[c] ?? null])) };
    }
  }

  /**
   * Restores export lines. Idempotent: nodes with an `id` are merged on it, relationships
   * merged, rows inserted with ON CONFLICT DO NOTHING. Every line must belong to `userId`
   * (the header's user, or the one given), else nothing is written.
   */
  async import(lines: ExportLine[], opts: { userId?: string; onProgress?: (done: number, total: number) => void } = {}): Promise<{ nodes: number; relationships: number; rows: number }> {
    const header = lines[0];
    if (!header || header.kind !== 'header' || header.format !== 'mnemograph-user-export') throw new ValidationError('invalid import: the first line must be a mnemograph-user-export header');
    const userId = opts.userId ?? header.userId;
    if (header.userId !== userId) throw new ValidationError(`invalid import: the file holds user ${header.userId}, not ${userId}`);
    const nodes = lines.filter((l): l is Extract<ExportLine, { kind: 'node' }> => l.kind === 'node');
    const rels = lines.filter((l): l is Extract<ExportLine, { kind: 'rel' }> => l.kind === 'rel');
    const rows = lines.filter((l): l is Extract<ExportLine, { kind: 'row' }> => l.kind === 'row');
    for (const n of nodes) {
      const owner = n.labels.includes('User') ? n.props.id : n.props.user_id;
      if (owner !== userId) throw new ValidationError(`invalid import: node ${n.ref} belongs to ${String(owner)}, not ${userId}`);
      n.labels.forEach((l) => quoteName(l));
    }
    rels.forEach((r) => quoteName(r.type));
    const tables = new Map((await this.tables()).map((t) => [t.table, t]));
    for (const r of rows) {
      if (!tables.has(r.table)) throw new ValidationError(`invalid import: unknown table ${r.table}`);
      if (r.row.user_id !== userId) throw new ValidationError(`invalid import: a ${r.table} row belongs to ${String(r.row.user_id)}, not ${userId}`);
    }

    const total = nodes.length + rels.length + rows.length;
    const progress = (n: number) => opts.onProgress?.(n, total);
    const eids = new Map<string, string>();
    const byLabel = groupBy(nodes, (n) => n.labels[0] ?? 'Node');
    for (const [label, group] of byLabel) {
      for (const batch of chunks(group, 200)) {
        const params = batch.map((n) => toImportRow(n));
        const res = await this.neo4j.write<{ ref: string; eid: string }>(IMPORT_NODES(label), { rows: params }, TAG('import'));
        for (const r of res) eids.set(r.ref, r.eid);
        progress(eids.size);
      }
    }
    let relCount = 0;
    for (const batch of chunks(rels, 500)) {
      const params = batch.map((r) => {
        const { plain, typed } = toPlainTyped(r.props, r.types);
        return {
          type: r.type,
          start: typeof r.start === 'string' ? (eids.get(r.start) ?? missing(r.start)) : null,
          end: typeof r.end === 'string' ? (eids.get(r.end) ?? missing(r.end)) : null,
          startShared: typeof r.start === 'string' ? null : sharedParam(r.start),
          endShared: typeof r.end === 'string' ? null : sharedParam(r.end),
          plain,
          typed,
        };
      });
      relCount += (await this.neo4j.write<{ n: number }>(IMPORT_RELS, { rows: params }, TAG('import')))[0]?.n ?? 0;
      progress(nodes.length + relCount);
    }
    let rowCount = 0;
    for (const r of rows) {
      const t = tables.get(r.table)!;
      const cols = t.columns.filter((c) => !c.generated && c.name in r.row).map((c) => quoteSql(c.name));
      const sql = `INSERT INTO ${quoteSql(t.table)} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM jsonb_populate_record(NULL::${quoteSql(t.table)}, $1::jsonb) ON CONFLICT DO NOTHING`;
      rowCount += (await this.pg.query(sql, [JSON.stringify(r.row)])).rowCount ?? 0;
      progress(nodes.length + rels.length + rowCount);
    }
    return { nodes: eids.size, relationships: relCount, rows: rowCount };
  }

  /**
   * Erases the user from Neo4j, Postgres and Redis, deletes the user's audit rows and
   * writes one audit record of the erasure. Shared nodes (tools, the embedding model) stay.
   *
   * Two sweeps: a write already under way when the erasure began (a storeTurn in flight,
   * an observation batch whose transaction holds its rows, which the table delete waits
   * for) may land after the first; the second, `graceMs` later, removes it. A consolidation
   * run checks that its conversation still exists before it writes what it extracted.
   */
  async erase(userId: string): Promise<ErasureReport> {
    await this.opts.beforeErase?.();
    const report: ErasureReport = { userId, nodesDeleted: 0, rowsDeleted: {}, redisKeysDeleted: 0, auditRowsDeleted: 0 };
    await this.sweep(userId, report);
    await new Promise((r) => setTimeout(r, this.opts.graceMs ?? 1000));
    await this.sweep(userId, report);
    // Recorded before the audit delete, so an audit row still queued or spooled elsewhere cannot land after it.
    await this.pg.query(RECORD_ERASURE, [userId]);
    report.auditRowsDeleted = (await this.pg.query(DELETE_AUDIT, [userId])).rowCount ?? 0;
    await this.pg.query(INSERT_ERASURE, [userId, JSON.stringify(report)]);
    return report;
  }

  /** Deletes the user's nodes, rows and keys, adding the counts to `report`. */
  private async sweep(userId: string, report: Pick<ErasureReport, 'nodesDeleted' | 'rowsDeleted' | 'redisKeysDeleted'>): Promise<void> {
    const refs = await this.nodeRefs(userId);
    for (const batch of chunks([...refs], 1000)) {
      report.nodesDeleted += (await this.neo4j.write<{ deleted: number }>(DELETE_NODES, { refs: batch }, TAG('erase')))[0]?.deleted ?? 0;
    }
    for (const t of await this.tables()) {
      const n = (await this.pg.query(`DELETE FROM ${quoteSql(t.table)} WHERE user_id = $1`, [userId])).rowCount ?? 0;
      if (n > 0) report.rowsDeleted[t.table] = (report.rowsDeleted[t.table] ?? 0) + n;
    }
    await this.working.clearUser(userScope(userId));
    const keys = await this.redisKeys(userId);
    for (const batch of chunks(keys, 500)) await this.redis.del(...batch);
    report.redisKeysDeleted += keys.length;
  }

  private async labels(): Promise<string[]> {
    return (await this.neo4j.read<{ label: string }>(LABELS, {}, TAG('labels'))).map((r) => r.label).filter((l) => SAFE_NAME.test(l));
  }

  private async nodeRefs(userId: string): Promise<Set<string>> {
    const refs = new Set<string>();
    for (const r of await this.neo4j.read<{ ref: string }>(USER_NODE, { userId }, TAG('refs'))) refs.add(r.ref);
    for (const label of await this.labels()) {
      if (label === 'User') continue;
      for (const r of await this.neo4j.read<{ ref: string }>(OWNED_NODES(label), { userId }, TAG('refs'))) refs.add(r.ref);
    }
    return refs;
  }

  private async tables(): Promise<TableInfo[]> {
    return (await this.pg.query<TableInfo>(USER_TABLES)).rows.filter((t) => !NOT_MEMORY.has(t.table));
  }

  /** Keys of the user in any subsystem: segments are ':'-separated and ids contain no glob characters. */
  private async redisKeys(userId: string): Promise<string[]> {
    const prefix = (this.redis.options as { keyPrefix?: string }).keyPrefix ?? '';
    const found = new Set<string>();
    for (const pattern of [`${prefix}*:${userId}:*`, `${prefix}*:${userId}`]) {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const k of keys) found.add(k.slice(prefix.length));
      } while (cursor !== '0');
    }
    return [...found];
  }
}

interface TypedProp {
  k: string;
  t: string;
  v: unknown;
}
interface SharedNode {
  labels: string[];
  id: unknown;
  name: unknown;
  owner: unknown;
}
interface RelRow {
  type: string;
  start: string;
  end: string;
  startShared: SharedNode | null;
  endShared: SharedNode | null;
  props: TypedProp[];
}

/** Plain JSON types need no annotation; the rest keep valueType() so import can rebuild them. */
function splitTyped(props: TypedProp[]): { props: Record<string, unknown>; types: Record<string, string> } {
  const out: Record<string, unknown> = {};
  const types: Record<string, string> = {};
  for (const p of props) {
    out[p.k] = p.v;
    if (!/^(STRING|BOOLEAN|FLOAT|LIST<STRING|LIST<FLOAT|LIST<BOOLEAN)/.test(p.t)) types[p.k] = p.t;
  }
  return { props: out, types };
}

/** A node from an export older than its label's scope_key (migration 006) gets one, or full-text would never find it. */
function withScopeKey(n: Extract<ExportLine, { kind: 'node' }>): Record<string, unknown> {
  const { user_id: userId, channel, scope_key: key } = n.props;
  const scoped = n.labels.some((l) => (SCOPED_LABELS as readonly string[]).includes(l));
  return scoped && key === undefined && typeof userId === 'string' && typeof channel === 'string' ? { ...n.props, scope_key: scopeKey(userId, channel) } : n.props;
}

function toPlainTyped(props: Record<string, unknown>, types: Record<string, string>): { plain: Record<string, unknown>; typed: TypedProp[] } {
  const plain: Record<string, unknown> = {};
  const typed: TypedProp[] = [];
  for (const [k, v] of Object.entries(props)) {
    if (types[k]) typed.push({ k, t: types[k]!, v });
    else plain[k] = v;
  }
  return { plain, typed };
}

function toImportRow(n: Extract<ExportLine, { kind: 'node' }>) {
  const { embedding, ...rest } = withScopeKey(n);
  const { plain, typed } = toPlainTyped(rest, n.types);
  return { ref: n.ref, id: typeof n.props.id === 'string' ? n.props.id : null, labels: n.labels, plain, typed, embedding: Array.isArray(embedding) ? embedding : null };
}

function sharedRef(node: SharedNode, userId: string): NodeRef | null {
  if (node.owner !== null && node.owner !== undefined && node.owner !== userId) return null;
  if (typeof node.id === 'string') return { labels: node.labels, key: 'id', value: node.id };
  if (typeof node.name === 'string') return { labels: node.labels, key: 'name', value: node.name };
  return null;
}

function sharedParam(ref: Exclude<NodeRef, string>) {
  const label = ref.labels[0];
  if (!label || (ref.key !== 'id' && ref.key !== 'name') || typeof ref.value !== 'string') throw new ValidationError('invalid import: a shared node reference needs a label, key id|name and a value');
  quoteName(label);
  return { label, key: ref.key, value: ref.value };
}

function missing(ref: string): never {
  throw new ValidationError(`invalid import: a relationship refers to node ${ref}, which the file does not contain`);
}

const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
/** Labels and relationship types become Cypher literals: only plain identifiers are accepted. */
function quoteName(name: string): string {
  if (!SAFE_NAME.test(name)) throw new ValidationError(`invalid import: ${JSON.stringify(name)} is not a label or relationship type this service writes`);
  return `\`${name}\``;
}
/** Table and column names come from the catalog; quoted all the same. */
function quoteSql(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const g = m.get(k);
    if (g) g.push(it);
    else m.set(k, [it]);
  }
  return m;
}
