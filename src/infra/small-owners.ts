/** A bounded map whose entries expire; the oldest entry goes first when full. */
class ExpiringMap<V> {
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
}

/** Up to this many nodes, an owner's exact vector scan costs about what an index query does. */
const SCAN_MAX_NODES = 2_000;
const MEMO_MS = 10 * 60_000;
const MEMO_MAX = 10_000;

/**
 * Per owner (a user) and for a while, whether they hold few enough nodes of one label for an
 * exact vector scan, counted by `count` when first asked. The shared vector indexes cannot
 * require an owner inside the index, so a small owner's nodes are a sliver of its neighbourhood:
 * asking the index first for them is a round trip that finds too few and is then followed by
 * the exact scan anyway (`indexOrFallback`). Remembered ten minutes (an owner who grows past
 * the line meanwhile is still scanned exactly: complete, only slower).
 */
export class SmallOwners {
  private readonly memo = new ExpiringMap<boolean>(MEMO_MAX);

  constructor(
    private readonly count: (userId: string) => Promise<number>,
    private readonly maxNodes = SCAN_MAX_NODES,
  ) {}

  /** What is remembered of the owner: small, not small, or unknown (undefined). */
  known(userId: string): boolean | undefined {
    return this.memo.get(userId);
  }

  /** Counts the owner's nodes and remembers whether they are small. */
  async learn(userId: string): Promise<boolean> {
    const small = (await this.count(userId)) <= this.maxNodes;
    this.memo.set(userId, small, Date.now() + MEMO_MS);
    return small;
  }
}
