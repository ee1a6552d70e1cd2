import type { AccessScope } from '../access';
import { words } from './query-text';

interface Entry {
  words: Set<string>;
  readAt: number;
  refreshing: boolean;
}

/**
 * The speaker names (as lower-case words) of each user's conversations, for leaving names out
 * of the turn searches. A user's first recall in this process reads them (one round trip);
 * after `ttlMs` the next recall re-reads them in the background, because another process may
 * have stored conversations with new speakers; names seen on hits are added in between.
 * Bounded: past `maxUsers`, the user least recently set is forgotten first.
 */
export class SpeakerMemo {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly read: (scope: AccessScope) => Promise<string[]>,
    private readonly opts: { ttlMs?: number; maxUsers?: number; onRefreshError?: (err: unknown) => void } = {},
  ) {}

  /** The scope's user's speaker words; awaits the store only the first time (`load` reports that read, and may fail). */
  async get(scope: AccessScope, load: (read: () => Promise<string[]>) => Promise<string[]>): Promise<Set<string>> {
    const userId = scope.userId;
    const entry = this.entries.get(userId);
    if (!entry) {
      const names = await load(() => this.read(scope));
      return this.set(userId, { words: new Set(names.flatMap(words)), readAt: Date.now(), refreshing: false }).words;
    }
    if (!entry.refreshing && Date.now() - entry.readAt >= (this.opts.ttlMs ?? 60_000)) {
      entry.refreshing = true;
      this.read(scope)
        .then((names) => {
          for (const w of names.flatMap(words)) entry.words.add(w);
        })
        .catch((err: unknown) => this.opts.onRefreshError?.(err))
        .finally(() => {
          // A failed read waits out the TTL too, rather than being retried on every recall.
          entry.readAt = Date.now();
          entry.refreshing = false;
        });
    }
    return entry.words;
  }

  /** Known words without reading (undefined before the user's first read). */
  peek(userId: string): Set<string> | undefined {
    return this.entries.get(userId)?.words;
  }

  /** Adds speaker names seen on hits. */
  add(userId: string, names: string[]): void {
    const entry = this.entries.get(userId);
    if (entry) for (const w of names.flatMap(words)) entry.words.add(w);
  }

  private set(userId: string, entry: Entry): Entry {
    this.entries.delete(userId);
    if (this.entries.size >= (this.opts.maxUsers ?? 10_000)) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(userId, entry);
    return entry;
  }
}
