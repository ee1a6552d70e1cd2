import type { CypherRunner, QueryTag } from './neo4j';
import { ExpiringMap } from './vector-scan';

/** One embedded node of an owner, as the owning store reads it for `OwnerVectors`. */
export interface OwnedVector {
  id: string;
  channel: string;
  /** The node's time (ms since the epoch), which recall windows filter on. */
  timestamp: number;
  /** The connection the node belongs to (null: none, visible to every connection). */
  connectionId: string | null;
  embedding: number[];
}

/** What one read of an owner's vectors returned: the nodes, and Neo4j's `timestamp()` when it read them. */
export interface VectorRead {
  /** 0 when unknown (no rows). */
  at: number;
  /**
   * When the oldest transaction open just before the read began (Neo4j ms; undefined when
   * Neo4j would not list them): no node embedded before it is missing from the read.
   */
  openSince?: number;
  nodes: OwnedVector[];
}

/** Which of an owner's nodes a ranking may return: the checks Neo4j's recall filter makes that a held vector can make too. */
export interface HeldFilter {
  channels: readonly string[];
  since: number;
  until: number;
  /** Active connections (null: no connection scoping), as in the recall filter. */
  connections: readonly string[] | null;
}

/** A ranking from memory: the best ids with their scores, and what the statement that checks them needs. */
export interface HeldRanking {
  ranked: Array<{ id: string; score: number }>;
  /** Nodes embedded after this (Neo4j ms) are not trusted from memory: the statement scores them itself. */
  seen: number;
  /** Whether every node that passed the filter is in `ranked` (no fallback can find more). */
  complete: boolean;
}

interface Held {
  ids: string[];
  channels: string[];
  times: number[];
  connections: Array<string | null>;
  /** Unit vectors (cosine is then a dot product). */
  vectors: Float32Array[];
  /** id -> position in the arrays above */
  position: Map<string, number>;
  /** Every node embedded (`embedded_at`) up to this is held: see OPEN_SLACK_MS. */
  seen: number;
  loadedAt: number;
  refreshedAt: number;
  rankedAt: number;
}

/**
 * A read misses only nodes embedded (`timestamp()`) by transactions still open when it ran,
 * and those began no earlier than the oldest one open just before it (`openSince`): every node
 * embedded before that is in the read, and the statement scores the later ones itself. A
 * second of slack for the clock's granularity; and a transaction open for longer than a
 * minute (an export, a stuck client) does not hold `seen` back: without `openSince`, or
 * behind such a transaction, a read is trusted up to a minute before its time.
 */
const OPEN_SLACK_MS = 1_000;
const COMMIT_MARGIN_MS = 60_000;
// -> {oldest}: when the oldest open transaction began (this one included), Neo4j ms
const OLDEST_OPEN = 'SHOW TRANSACTIONS YIELD startTime RETURN min(datetime(startTime).epochMillis) AS oldest';
/** How often an owner's newly embedded nodes are read into memory (in the background). */
const REFRESH_MS = 30_000;
/**
 * How long an owner's vectors are kept before they are read again whole (dropping deleted
 * nodes), and how long an owner not searched is kept at all (an erased user's vectors leave a
 * process that did not erase them).
 */
const RELOAD_MS = 10 * 60_000;
/** How long an owner's first read waits after the search that asked for it (which scans in Neo4j meanwhile). */
const FIRST_READ_DELAY_MS = 1_000;
/** Vectors held in all (~1.5 KB each at 384 dimensions): the least recently ranked owners go first. */
const MAX_VECTORS = 50_000;
/** Ids ranked beyond the limit, for nodes the statement's filter drops that memory cannot tell (archived, deleted, superseded). */
const SLACK = 16;
/** Every node passes, whatever its time (facts and entities: recall narrows them by time later). */
export const ANY_TIME = { since: -Infinity, until: Infinity } as const;

/**
 * Per owner (a user), their embedded nodes of one label in memory, so that the exact vector
 * scan of a small owner (`SmallOwners`) is a dot product here instead of Neo4j reading every
 * embedding: Neo4j decodes a stored float array at ~15-20 µs, so a 419-turn scan cost it 8-15
 * ms per recall, and 2,000 turns five times that. Memory only ranks: the owning store's
 * statement then checks the ranked ids against Neo4j with the full recall filter (deleted,
 * archived, another owner's: gone), and scores itself every node embedded after `seen` (when
 * the oldest transaction open at the last read began), so a node stored by any process is found at once. Read in the
 * background a second after an owner's second search within ten minutes (until then `rank`
 * returns undefined and the caller scans as before), their new embeddings read every 30 s,
 * everything again after 10 minutes. A read costs the driver ~0.1 ms of CPU per embedding
 * (50-80 ms for 490 turns, one record each; collected into one record it took 180-490 ms).
 */
export class OwnerVectors {
  private readonly held = new Map<string, Held>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Owners never ranked here (a warm-up rehearsing the scan). */
  private readonly scanOnly = new Set<string>();
  /** Owners searched once and not held. */
  private readonly searched = new ExpiringMap<boolean>(10_000);
  private size = 0;
  /** Counts `release`s: a read that began before one is not kept (it may hold a forgotten owner's nodes). */
  private releases = 0;

  /**
   * The embeddings of `label` as a store's options ask (undefined with `heldVectors: 0`: none
   * held), read by heldReadCypher's two statements, tagged `heldVectors` and `heldVectorsAfter`.
   */
  static forLabel(db: Pick<CypherRunner, 'read'>, label: HeldLabel, tag: (op: string) => QueryTag, opts: HeldVectorsOptions = {}): OwnerVectors | undefined {
    if (opts.heldVectors === 0) return undefined;
    const statements = heldReadCypher(label);
    return new OwnerVectors(
      async (userId, after) => {
        // Listed first: a transaction that commits after the read began after this.
        const open = await db.read<{ oldest: number }>(OLDEST_OPEN, {}, tag('openTransactions')).catch(() => []);
        const nodes = await db.read<OwnedVector & { at: number }>(after === null ? statements.all : statements.after, { userId, after }, tag(after === null ? 'heldVectors' : 'heldVectorsAfter'));
        return { at: nodes[0]?.at ?? 0, openSince: open[0]?.oldest ?? undefined, nodes };
      },
      { maxVectors: opts.heldVectors, idle: opts.idle },
    );
  }

  constructor(
    /** The owner's embedded nodes, or (with `after`) those embedded after that time. */
    private readonly read: (ownerId: string, after: number | null) => Promise<VectorRead>,
    private readonly opts: OwnerVectorsOptions & { now?: () => number; firstReadDelayMs?: number } = {},
  ) {}

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /**
   * The best `n` of the owner's held nodes that pass `filter`, by cosine to `embedding`
   * (normalised as Neo4j's `vector.similarity.cosine`, (1 + cos) / 2); undefined when the
   * owner's vectors are not held (read on their second search) or are of another dimension.
   */
  rank(ownerId: string, embedding: readonly number[], filter: HeldFilter, n: number): HeldRanking | undefined {
    if (this.scanOnly.has(ownerId)) return undefined;
    const h = this.held.get(ownerId);
    if (h === undefined) {
      // Read on the owner's second search within ten minutes: a user searched once (a batch
      // job, a benchmark) would pay the read for nothing.
      if (this.searched.get(ownerId) === true) this.refresh(ownerId, null);
      else this.searched.set(ownerId, true, Date.now() + RELOAD_MS);
      return undefined;
    }
    if (h.vectors.length > 0 && h.vectors[0]!.length !== embedding.length) return undefined;
    const now = this.now;
    h.rankedAt = now;
    this.held.delete(ownerId);
    this.held.set(ownerId, h); // most recently ranked last
    this.expire(now);
    if (now - h.loadedAt > RELOAD_MS) this.refresh(ownerId, null);
    else if (now - h.refreshedAt > REFRESH_MS) this.refresh(ownerId, h.seen);

    const q = unit(embedding);
    const channels = new Set(filter.channels);
    const picked: number[] = [];
    const scores = new Float64Array(h.ids.length);
    for (let i = 0; i < h.ids.length; i++) {
      const t = h.times[i]!;
      const c = h.connections[i]!;
      if (!channels.has(h.channels[i]!) || t < filter.since || t > filter.until) continue;
      if (filter.connections !== null && c !== null && !filter.connections.includes(c)) continue;
      const v = h.vectors[i]!;
      let dot = 0;
      for (let d = 0; d < v.length; d++) dot += v[d]! * q[d]!;
      picked.push(i);
      scores[i] = (1 + dot) / 2;
    }
    picked.sort((a, b) => scores[b]! - scores[a]!);
    return {
      ranked: picked.slice(0, n).map((i) => ({ id: h.ids[i]!, score: scores[i]! })),
      seen: h.seen,
      complete: picked.length <= n,
    };
  }

  /**
   * The owner's exact vector search for `limit` nodes: ranked here when their vectors are held
   * (`limit` + 16 ids) and checked and completed by `held`, the owning store's statement; `scan`
   * in Neo4j when they are not held yet (or with `filter` undefined: a filter memory does not
   * know), or when the statement's filter dropped so many of a cut ranking that others may be missing.
   */
  async search<T>(ownerId: string, embedding: readonly number[], filter: HeldFilter | undefined, limit: number, held: (ranking: HeldRanking) => Promise<T[]>, scan: () => Promise<T[]>): Promise<T[]> {
    const ranking = filter === undefined ? undefined : this.rank(ownerId, embedding, filter, limit + SLACK);
    if (ranking !== undefined) {
      const rows = await held(ranking);
      if (rows.length >= limit || ranking.complete) return rows;
    }
    return scan();
  }

  /** The stores' `holdVectors`: `hold` (`held`), or `release` (`scan`: scan only; `forget`). */
  async holdMode(ownerId: string, mode: HoldMode): Promise<void> {
    if (mode === 'held') await this.hold(ownerId);
    else this.release(ownerId, mode === 'scan');
  }

  /** Reads the owner's vectors now, as their second search would (warm-up). */
  async hold(ownerId: string): Promise<void> {
    this.scanOnly.delete(ownerId);
    await this.settled();
    await this.readInto(ownerId, null);
  }

  /** Forgets the owner; with `scanOnly`, `rank` answers undefined for them until `hold` (warm-up). */
  release(ownerId: string, scanOnly: boolean): void {
    this.releases++;
    this.drop(ownerId);
    this.searched.delete(ownerId);
    if (scanOnly) this.scanOnly.add(ownerId);
    else this.scanOnly.delete(ownerId);
  }

  private drop(ownerId: string): void {
    const h = this.held.get(ownerId);
    if (h === undefined) return;
    this.size -= h.ids.length;
    this.held.delete(ownerId);
  }

  /** Resolves when no load or refresh is in flight (tests). */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(this.loading.values());
  }

  /** Reads the owner's vectors (all, or those embedded after `after`) in the background, one read per owner at a time. */
  private refresh(ownerId: string, after: number | null): void {
    if (this.loading.has(ownerId)) return;
    // An owner's first read waits a moment: it decodes every embedding in Neo4j and here, and
    // would otherwise run beside the search that asked (that search scans in Neo4j anyway).
    const delay = this.held.has(ownerId) ? 0 : (this.opts.firstReadDelayMs ?? FIRST_READ_DELAY_MS);
    const load = new Promise<void>((resolve) => (delay > 0 ? setTimeout(resolve, delay).unref() : resolve()))
      .then(() => this.opts.idle?.())
      .then(() => this.readInto(ownerId, after))
      .finally(() => this.loading.delete(ownerId));
    this.loading.set(ownerId, load);
  }

  /** Drops the owners not ranked for RELOAD_MS (the least recently ranked are first in `held`). */
  private expire(now: number): void {
    for (const [ownerId, h] of this.held) {
      if (now - h.rankedAt <= RELOAD_MS) return;
      this.drop(ownerId);
    }
  }

  private async readInto(ownerId: string, after: number | null): Promise<void> {
    const started = this.now;
    const releases = this.releases;
    let read: VectorRead;
    try {
      read = await this.read(ownerId, after);
    } catch {
      return; // what is held stays (or nothing is: the caller scans in Neo4j as before)
    }
    if (this.releases !== releases) return;
    if (after === null) this.replace(ownerId, read, started);
    else this.merge(ownerId, read, started);
  }

  private replace(ownerId: string, read: VectorRead, started: number): void {
    this.drop(ownerId);
    // Nodes embedded before `embedded_at` was kept have none (0 to the statement): held, as this read them.
    const h: Held = { ids: [], channels: [], times: [], connections: [], vectors: [], position: new Map(), seen: 0, loadedAt: started, refreshedAt: started, rankedAt: this.now };
    this.held.set(ownerId, h);
    this.put(h, read);
    this.evict(ownerId);
  }

  /** Adds a read of the nodes embedded after `seen`: every node embedded up to the new `seen` is then held. */
  private merge(ownerId: string, read: VectorRead, started: number): void {
    const h = this.held.get(ownerId);
    if (h === undefined) return;
    h.refreshedAt = started;
    this.put(h, read);
    this.evict(ownerId);
  }

  private put(h: Held, read: VectorRead): void {
    h.seen = Math.max(h.seen, read.at - COMMIT_MARGIN_MS, (read.openSince ?? -Infinity) - OPEN_SLACK_MS);
    for (const r of read.nodes) {
      let i = h.position.get(r.id);
      if (i === undefined) {
        i = h.ids.length;
        h.position.set(r.id, i);
        h.ids.push(r.id);
        this.size++;
      }
      h.channels[i] = r.channel;
      h.times[i] = r.timestamp;
      h.connections[i] = r.connectionId;
      h.vectors[i] = unit(r.embedding);
    }
  }

  /** Drops the least recently ranked owners until the vectors fit, never `keep` (just read). */
  private evict(keep: string): void {
    const max = this.opts.maxVectors ?? MAX_VECTORS;
    for (const ownerId of [...this.held.keys()]) {
      if (this.size <= max) return;
      if (ownerId !== keep) this.drop(ownerId);
    }
  }
}

function unit(v: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const out = new Float32Array(v.length);
  const s = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * s;
  return out;
}

/** How a store holds an owner's embeddings: only scanned in Neo4j (`scan`, warm-up), read and held now (`held`), or forgotten (`forget`). */
export type HoldMode = 'scan' | 'held' | 'forget';

/** A store's options for its held embeddings (OwnerVectors.forLabel). */
export interface HeldVectorsOptions {
  /** Embeddings held in all, per label (0: none, every scan in Neo4j). */
  heldVectors?: number;
  /** Awaited before a background read of an owner's embeddings (the InteractiveGate's idle). */
  idle?: () => Promise<void>;
}

export interface OwnerVectorsOptions {
  /** Vectors held in all (default 50,000). */
  maxVectors?: number;
  /** Awaited before each background read (the InteractiveGate's idle: interactive calls first); not by `hold`. */
  idle?: () => Promise<void>;
}

/** How a label's nodes are read and checked for `OwnerVectors`: Cypher of the owning store. */
export interface HeldLabel {
  label: string;
  /** The statement's variable for a node. */
  v: string;
  /** The store's search filter on `v` (its parameters, with $userId). */
  filter: string;
  /** Expressions for the held fields of `v`: its time (ms since the epoch) and connection (null: none). */
  timestamp: string;
  connectionId: string;
}

/**
 * A label's two reads for `OwnerVectors.forLabel`: the owner's embedded nodes ($userId), and
 * those embedded after $after (a seek on ({label}(user_id, embedded_at))), with Neo4j's time of
 * the read; a record each (the driver decoded them all collected into one record 3-5x slower).
 */
export function heldReadCypher(l: HeldLabel): { all: string; after: string } {
  const { label, v } = l;
  const read = (match: string) => `${match} AND ${v}.embedding IS NOT NULL
RETURN timestamp() AS at, ${v}.id AS id, ${v}.channel AS channel, ${l.timestamp} AS timestamp, ${l.connectionId} AS connectionId, ${v}.embedding AS embedding`;
  return {
    all: read(`MATCH (${v}:${label}) WHERE ${v}.user_id = $userId`),
    after: read(`MATCH (${v}:${label}) USING INDEX SEEK ${v}:${label}(user_id, embedded_at) WHERE ${v}.user_id = $userId AND ${v}.embedded_at > $after`),
  };
}

/**
 * $ranked: [{id, score}] (an owner's nodes ranked from memory), $seen, $embedding, $limit and the
 * filter's parameters -> `v`, score, best first, at most $limit (the caller's RETURN follows): the
 * exact scan's answer without Neo4j reading every embedding. The ranked nodes are checked against
 * the filter (one id seek each); the nodes embedded after $seen, which memory may not hold or may
 * hold stale, are scored here (a seek on (user_id, embedded_at)).
 */
export function heldSearchCypher(l: Pick<HeldLabel, 'label' | 'v' | 'filter'>): string {
  const { label, v, filter } = l;
  return `
CALL () {
  UNWIND $ranked AS r
  MATCH (${v}:${label} {id: r.id}) USING INDEX SEEK ${v}:${label}(id) WHERE ${filter} AND coalesce(${v}.embedded_at, 0) <= $seen
  RETURN ${v}, r.score AS score
  UNION ALL
  MATCH (${v}:${label}) USING INDEX SEEK ${v}:${label}(user_id, embedded_at) WHERE ${v}.user_id = $userId AND ${v}.embedded_at > $seen AND ${filter}
    AND ${v}.embedding IS NOT NULL
  RETURN ${v}, vector.similarity.cosine(${v}.embedding, $embedding) AS score
}
WITH ${v}, score ORDER BY score DESC LIMIT toInteger($limit)`;
}
