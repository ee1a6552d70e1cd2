import type { CypherRunner } from '../infra/neo4j';

const TAG = (op: string) => ({ subsystem: 'census', op });

// -> {label}: every node label in the database
const LABELS = 'CALL db.labels() YIELD label RETURN label ORDER BY label';
// -> {type}: every relationship type in the database
const REL_TYPES = 'CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS type ORDER BY type';
// -> {n}: nodes of one label; a label literal lets Neo4j answer from its count store (O(1))
const COUNT_NODES = (label: string) => `MATCH (n:\`${label}\`) RETURN count(n) AS n`;
// -> {n}: relationships of one type, from the count store
const COUNT_RELS = (type: string) => `MATCH ()-[r:\`${type}\`]->() RETURN count(r) AS n`;

/** Only plain identifiers become literals (the catalog could hold anything). */
const SAFE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Whole-graph counts from the schema catalog (no label or type named here: it counts
 * whatever the stores created), for `mnemograph stats` and the metrics gauges.
 */
export class Neo4jGraphCensus {
  constructor(private readonly db: CypherRunner) {}

  /** Nodes per label, by label name. */
  async nodesPerLabel(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const { label } of await this.db.read<{ label: string }>(LABELS, {}, TAG('labels'))) {
      if (SAFE.test(label)) out.set(label, (await this.db.read<{ n: number }>(COUNT_NODES(label), {}, TAG('count-nodes')))[0]?.n ?? 0);
    }
    return out;
  }

  /** Relationships per type, by type name. */
  async relationshipsPerType(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const { type } of await this.db.read<{ type: string }>(REL_TYPES, {}, TAG('types'))) {
      if (SAFE.test(type)) out.set(type, (await this.db.read<{ n: number }>(COUNT_RELS(type), {}, TAG('count-relationships')))[0]?.n ?? 0);
    }
    return out;
  }
}
