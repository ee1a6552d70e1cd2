import type { CypherRunner, QueryTag } from './neo4j';

/** A bounded map whose entries expire; the oldest entry goes first when full. */
export class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.until > Date.now()) return e.value;
    this.entries.delete(key);
    return undefined;
  }
  set(key: string, value: V, deadline: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: deadline });
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** Up to this many nodes, an owner's exact vector scan costs about what an index query does. */
const SCAN_MAX_NODES = 2_000;
const MEMO_MS = 10 * 60_000;
const MEMO_MAX = 10_000;

/**
 * Per owner (a user) and for a while, whether they hold few enough nodes of one label for an
 * exact vector scan, counted by `count` when first asked. The shared vector indexes cannot
 * require an owner inside the index, so a small owner's nodes are a sliver of its neighbourhood:
 * asking the index for them is a round trip that finds too few and is then followed by the
 * exact scan anyway (`indexOrFallback`). Remembered ten minutes (an owner who grows past
 * the line meanwhile is still scanned exactly: complete, only slower).
 */
export class SmallOwners {
  private readonly memo = new ExpiringMap<boolean>(MEMO_MAX);

  constructor(
    private readonly count: (userId: string) => Promise<number>,
    private readonly maxNodes = SCAN_MAX_NODES,
  ) {}

  /** Owners counted by the owning store's statement `$userId -> {n}`. */
  static counted(db: Pick<CypherRunner, 'read'>, cypher: string, tag: QueryTag, maxNodes?: number): SmallOwners {
    return new SmallOwners(async (userId) => (await db.read<{ n: number }>(cypher, { userId }, tag))[0]?.n ?? 0, maxNodes);
  }

  /** What is remembered of the owner: small, not small, or unknown (undefined). */
  known(userId: string): boolean | undefined {
    return this.memo.get(userId);
  }

  /** Whether the owner is small: as remembered, else counted now (undefined when the count failed). */
  small(userId: string): Promise<boolean | undefined> {
    const known = this.known(userId);
    return known !== undefined ? Promise.resolve(known) : this.learn(userId).catch(() => undefined);
  }
  /** Counts the owner's nodes and remembers whether they are small. */
  async learn(userId: string): Promise<boolean> {
    const small = (await this.count(userId)) <= this.maxNodes;
    this.memo.set(userId, small, Date.now() + MEMO_MS);
    return small;
  }
}

/**
 * One filtered index query (k = 4 × limit, 100 to 2,000); when fewer than `limit` rows
 * survive the filter, the caller's nodes are a small share of the index, and `fallback`
 * answers instead: an exact query over the caller's own nodes. Two round trips at most
 * (widening k step by step would cost up to four, each slower than the last, for a user
 * who has few nodes at all). For vector indexes, which cannot require an owner inside the
 * index as the full-text ones do (infra/fulltext-scope). With `owner`, an owner not known yet
 * is counted first (a failed count leaves them unknown), and a small one goes to the exact
 * query without asking the index: most owners are small, and for them the index query was a
 * round trip and a graph search that found too few.
 */
export async function indexOrFallback<T>(limit: number, index: (k: number) => Promise<T[]>, fallback: () => Promise<T[]>, owner?: { sizes: SmallOwners; userId: string }): Promise<T[]> {
  if (owner && (await owner.sizes.small(owner.userId)) === true) return fallback();
  const found = await index(Math.min(Math.max(limit * 4, 100), 2_000));
  return found.length >= limit ? found : fallback();
}
