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
  at: number;
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
  at: Map<string, number>;
  /** Every node embedded (`embedded_at`) up to this is held: see COMMIT_MARGIN_MS. */
  seen: number;
  loadedAt: number;
  refreshedAt: number;
}

/**
 * A transaction may evaluate `timestamp()` this long before it commits, so a read at Neo4j
 * time `at` has seen every node embedded up to `at` - this margin, but maybe not a node
 * embedded after that whose transaction was still open: the statement scores those itself.
 */
const COMMIT_MARGIN_MS = 60_000;
/** How often an owner's newly embedded nodes are read into memory (in the background). */
const REFRESH_MS = 30_000;
/** How long an owner's vectors are kept before they are read again whole (dropping deleted nodes). */
const RELOAD_MS = 10 * 60_000;
/** Vectors held in all (~1.5 KB each at 384 dimensions): the least recently ranked owners go first. */
const MAX_VECTORS = 50_000;

/**
 * Per owner (a user), their embedded nodes of one label in memory, so that the exact vector
 * scan of a small owner (`SmallOwners`) is a dot product here instead of Neo4j reading every
 * embedding: Neo4j decodes a stored float array at ~15-20 µs, so a 419-turn scan cost it 8-15
 * ms per recall, and 2,000 turns five times that. Memory only ranks: the owning store's
 * statement then checks the ranked ids against Neo4j with the full recall filter (deleted,
 * archived, another owner's: gone), and scores itself every node embedded after `seen` (a
 * minute before the last read), so a node stored by any process is found at once. Loaded in the
 * background on an owner's first ranking (which returns undefined: the caller scans as
 * before), their new embeddings read every 30 s, everything again after 10 minutes.
 */
export class OwnerVectors {
  private readonly held = new Map<string, Held>();
  private readonly loading = new Map<string, Promise<void>>();
  private size = 0;

  constructor(
    /** The owner's embedded nodes, or (with `after`) those embedded after that time. */
    private readonly read: (ownerId: string, after: number | null) => Promise<VectorRead>,
    private readonly opts: { maxVectors?: number; now?: () => number } = {},
  ) {}

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /**
   * The best `n` of the owner's held nodes that pass `filter`, by cosine to `embedding`
   * (normalised as Neo4j's `vector.similarity.cosine`, (1 + cos) / 2); undefined when the
   * owner's vectors are not held yet (their load starts) or are of another dimension.
   */
  rank(ownerId: string, embedding: readonly number[], filter: HeldFilter, n: number): HeldRanking | undefined {
    const h = this.held.get(ownerId);
    if (h === undefined) {
      this.refresh(ownerId, null);
      return undefined;
    }
    if (h.vectors.length > 0 && h.vectors[0]!.length !== embedding.length) return undefined;
    this.held.delete(ownerId);
    this.held.set(ownerId, h); // most recently ranked last
    const now = this.now;
    if (now - h.loadedAt > RELOAD_MS) this.refresh(ownerId, null);
    else if (now - h.refreshedAt > REFRESH_MS) this.refresh(ownerId, h.seen);

    const q = unit(embedding);
    const channels = new Set(filter.channels);
    const picked: number[] = [];
    const scores: number[] = [];
    for (let i = 0; i < h.ids.length; i++) {
      const t = h.times[i]!;
      const c = h.connections[i];
      if (!channels.has(h.channels[i]!) || t < filter.since || t > filter.until) continue;
      if (filter.connections !== null && c !== null && !filter.connections.includes(c!)) continue;
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

  /** Forgets the owner (their vectors are read again on their next ranking). */
  drop(ownerId: string): void {
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
    const started = this.now;
    const load = this.read(ownerId, after)
      .then((r) => (after === null ? this.replace(ownerId, r, started) : this.merge(ownerId, r, started)))
      // A failed read leaves what is held (or nothing: the caller scans in Neo4j as before).
      .catch(() => undefined)
      .finally(() => this.loading.delete(ownerId));
    this.loading.set(ownerId, load);
  }

  private replace(ownerId: string, read: VectorRead, started: number): void {
    this.drop(ownerId);
    // Nodes embedded before `embedded_at` was kept have none (0 to the statement): held, as this read them.
    const h: Held = { ids: [], channels: [], times: [], connections: [], vectors: [], at: new Map(), seen: 0, loadedAt: started, refreshedAt: started };
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
    h.seen = Math.max(h.seen, read.at - COMMIT_MARGIN_MS);
    for (const r of read.nodes) {
      let i = h.at.get(r.id);
      if (i === undefined) {
        i = h.ids.length;
        h.at.set(r.id, i);
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
