import { ValidationError } from '../errors';
import { scopeKey } from '../access';
import { SCOPED_LABELS } from '../infra/fulltext-scope';
import type { CypherRunner } from '../infra/neo4j';
import { poolProvenance } from '../pools/neo4j-pool-store';
import { chunks, type AgentView, type ErasureReport, type ExportLine, type ImportCounts, type NodeRef, type UserDataPart, type UserStats } from './user-data';

const TAG = (op: string) => ({ subsystem: 'tenancy', op });

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
// $userId, $readable (pools an agent may read; null: every node) -> {ref}: the nodes of a label the user owns
// (per label, so the user_id range index is used); pool data only of the readable pools (AgentView)
const OWNED_NODES = (label: string) => `MATCH (n:${quoteName(label)}) WHERE n.user_id = $userId AND ($readable IS NULL OR n.pool_id IS NULL OR n.pool_id IN $readable) RETURN elementId(n) AS ref`;
// $userIds -> {userId, n}: how many nodes of a label each user owns (the user_id range index, no rows read)
const COUNT_OWNED = (label: string) => `UNWIND $userIds AS uid MATCH (n:${quoteName(label)}) WHERE n.user_id = uid RETURN uid AS userId, count(n) AS n`;
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

/**
 * The user's part of the graph, for every store at once: every node with the user's
 * `user_id` (found per label from the catalog, so a new label is covered without changes
 * here), the user's anchor node (the episodic store's `User`), and their relationships.
 * One part because relationships cross stores (a fact DERIVED_FROM a turn): an import
 * needs every node of the file before any relationship.
 */
export class Neo4jUserGraph implements UserDataPart {
  readonly kind = 'graph';
  readonly tables: readonly string[] = [];

  constructor(private readonly neo4j: CypherRunner) {}

  owns(line: ExportLine): boolean {
    return line.kind === 'node' || line.kind === 'rel';
  }

  async stats(userId: string, into: UserStats, view?: AgentView): Promise<void> {
    const readable = view?.readablePools ?? null;
    for (const label of await this.labels()) {
      const n = label === 'User' ? (await this.neo4j.read(USER_NODE, { userId }, TAG('stats'))).length : (await this.neo4j.read(OWNED_NODES(label), { userId, readable }, TAG('stats'))).length;
      if (n > 0) into.nodes[label] = n;
    }
  }

  /** Nodes per label (non-zero only) of each of `userIds`: the counts a listing of users shows, one query per label. */
  async nodeCounts(userIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
    const out = new Map<string, Record<string, number>>(userIds.map((u) => [u, {}]));
    if (userIds.length === 0) return out;
    for (const label of await this.labels()) {
      if (label === 'User') continue;
      for (const r of await this.neo4j.read<{ userId: string; n: number }>(COUNT_OWNED(label), { userIds }, TAG('nodeCounts'))) {
        if (r.n > 0) out.get(r.userId)![label] = r.n;
      }
    }
    return out;
  }

  async *export(userId: string, view?: AgentView): AsyncGenerator<ExportLine> {
    const all = [...(await this.nodeRefs(userId))];
    // An agent's export leaves out the nodes it may not see, and every relationship touching one.
    const refs = view ? await this.nodeRefs(userId, view) : new Set(all);
    const hidden = (ref: NodeRef) => typeof ref === 'string' && !refs.has(ref);
    for (const batch of chunks([...refs], 500)) {
      const rows = await this.neo4j.read<{ ref: string; labels: string[]; props: TypedProp[] }>(READ_NODES, { refs: batch }, TAG('export'));
      for (const r of rows) yield { kind: 'node', ref: r.ref, labels: r.labels, ...splitTyped(r.props) };
    }
    for (const batch of chunks([...refs], 500)) {
      const rows = await this.neo4j.read<RelRow>(READ_RELS, { refs: batch, all }, TAG('export'));
      for (const r of rows) {
        const start = r.startShared ? sharedRef(r.startShared, userId) : r.start;
        const end = r.endShared ? sharedRef(r.endShared, userId) : r.end;
        // A link to another user's node is never exported (and should not exist).
        if (start === null || end === null || hidden(start) || hidden(end)) continue;
        yield { kind: 'rel', type: r.type, start, end, ...splitTyped(r.props) };
      }
    }
  }

  async check(lines: ExportLine[], userId: string): Promise<void> {
    for (const n of lines) {
      if (n.kind !== 'node') continue;
      const owner = n.labels.includes('User') ? n.props.id : n.props.user_id;
      if (owner !== userId) throw new ValidationError(`invalid import: node ${n.ref} belongs to ${String(owner)}, not ${userId}`);
      n.labels.forEach((l) => quoteName(l));
    }
    for (const r of lines) if (r.kind === 'rel') quoteName(r.type);
  }

  async import(lines: ExportLine[], progress: (done: number) => void): Promise<ImportCounts> {
    const nodes = lines.filter((l): l is Extract<ExportLine, { kind: 'node' }> => l.kind === 'node');
    const rels = lines.filter((l): l is Extract<ExportLine, { kind: 'rel' }> => l.kind === 'rel');
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
    return { nodes: eids.size, relationships: relCount, rows: 0 };
  }

  async erase(userId: string, report: ErasureReport): Promise<void> {
    // Shared pool entries written without a user id but from the user's conversations name the user by provenance: they go too.
    report.nodesDeleted += await this.neo4j.writeTx(async (tx) => poolProvenance.purge(tx, await poolProvenance.namingUser(tx, userId)), TAG('erase'));
    const refs = await this.nodeRefs(userId);
    for (const batch of chunks([...refs], 1000)) {
      report.nodesDeleted += (await this.neo4j.write<{ deleted: number }>(DELETE_NODES, { refs: batch }, TAG('erase')))[0]?.deleted ?? 0;
    }
  }

  private async labels(): Promise<string[]> {
    return (await this.neo4j.read<{ label: string }>(LABELS, {}, TAG('labels'))).map((r) => r.label).filter((l) => SAFE_NAME.test(l));
  }

  private async nodeRefs(userId: string, view?: AgentView): Promise<Set<string>> {
    const refs = new Set<string>();
    const readable = view?.readablePools ?? null;
    for (const r of await this.neo4j.read<{ ref: string }>(USER_NODE, { userId }, TAG('refs'))) refs.add(r.ref);
    for (const label of await this.labels()) {
      if (label === 'User') continue;
      for (const r of await this.neo4j.read<{ ref: string }>(OWNED_NODES(label), { userId, readable }, TAG('refs'))) refs.add(r.ref);
    }
    return refs;
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
    if (types[k]) typed.push({ k, t: types[k], v });
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
