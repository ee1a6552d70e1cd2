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
  auditRowsRedacted: number;
  /** The erasure record's receipt (src/audit ErasureReceipt) as JSON text, once the erasure is complete. */
  receipt?: string;
}

/** A report of an erasure that has deleted nothing yet (its parts add to it). */
export function emptyErasureReport(userId: string): ErasureReport {
  return { userId, nodesDeleted: 0, rowsDeleted: {}, redisKeysDeleted: 0, auditRowsRedacted: 0 };
}

/** What one part restored. */
export interface ImportCounts {
  nodes: number;
  relationships: number;
  rows: number;
}

/**
 * What an agent key sees of a user's whole memory: exactly what its routes show it. Pool
 * data (any node with a `pool_id`) only of the pools it may read, short-term entries only its
 * own; everything else of the user as an admin key sees it. Absent: the whole tenant (an admin
 * key, the CLI, the library).
 */
export interface AgentView {
  agentId: string;
  readablePools: readonly string[];
}

/**
 * One store's share of a user's memory: the per-user operations that `stats`, `export`,
 * `import` and `forget-user` are composed from. Every part is listed once, in the
 * composition root (src/container.ts); a Postgres table with a `user_id` column that no
 * part claims makes every whole-user operation fail, so a new kind of memory cannot be
 * left out of forget-user.
 */
export interface UserDataPart {
  /** Names the part (its store) in errors. */
  readonly kind: string;
  /** Postgres tables whose rows this part exports and erases (checked against the catalog). */
  readonly tables: readonly string[];
  /** True for the export lines this part writes and restores. */
  owns(line: ExportLine): boolean;
  /** Adds the user's counts (only non-zero entries) to `into`; with `view`, only what that agent may see. */
  stats(userId: string, into: UserStats, view?: AgentView): Promise<void>;
  /** Optional: node counts per label of many users at once (the graph part), for listings. */
  nodeCounts?(userIds: readonly string[]): Promise<Map<string, Record<string, number>>>;
  /** The user's lines, streamed; with `view`, only what that agent may see. */
  export(userId: string, view?: AgentView): AsyncIterable<ExportLine>;
  /** Throws ValidationError when one of its `lines` is not `userId`'s or cannot be restored. Writes nothing. */
  check(lines: ExportLine[], userId: string): Promise<void>;
  /** Restores its (checked) lines idempotently; `onProgress` gets how many of them are done. */
  import(lines: ExportLine[], onProgress: (done: number) => void): Promise<ImportCounts>;
  /** Deletes the user's data of this part, adding the counts to `report`. Idempotent. */
  erase(userId: string, report: ErasureReport): Promise<void>;
}

/** `items` in slices of at most `size`. */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
