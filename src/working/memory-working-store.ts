import type { AccessScope } from '../access';
import { sessionKey, userKeyPrefix, type ActiveGoal, type SessionScope, type WorkingMemoryStore, type WorkingTurn } from './contract';

interface Entry {
  value: unknown;
  expiresAt: number;
}

/**
 * Process-local working memory with the same TTL and capping semantics as the Redis store.
 * Used while Redis is unreachable; expired entries are dropped when read and swept
 * periodically. The clock is injectable for tests.
 */
export class MemoryWorkingStore implements WorkingMemoryStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlSeconds: number,
    private readonly maxTurns: number,
    private readonly now: () => number = Date.now,
  ) {}

  private read<T>(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value as T;
  }

  private write(key: string, value: unknown, ttlSeconds = this.ttlSeconds): void {
    this.entries.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
  }

  private pushCapped(key: string, item: unknown): void {
    const list = this.read<unknown[]>(key) ?? [];
    this.write(key, [item, ...list].slice(0, this.maxTurns));
  }

  async addTurns(scope: SessionScope, turns: WorkingTurn[]): Promise<void> {
    for (const turn of turns) this.pushCapped(`${sessionKey(scope)}:turns`, turn);
  }

  async getRecentTurns(scope: SessionScope, limit: number): Promise<WorkingTurn[]> {
    return (this.read<WorkingTurn[]>(`${sessionKey(scope)}:turns`) ?? []).slice(0, limit);
  }

  async removeTurns(scope: SessionScope, indexes: readonly number[]): Promise<number> {
    const key = `${sessionKey(scope)}:turns`;
    const e = this.entries.get(key);
    const list = this.read<WorkingTurn[]>(key);
    if (!e || !list) return 0;
    const kept = list.filter((t) => !indexes.includes(t.index));
    e.value = kept; // the list keeps its expiry
    return list.length - kept.length;
  }

  async set(scope: SessionScope, key: string, value: unknown, ttlSeconds?: number): Promise<void> {
    this.write(`${sessionKey(scope)}:ctx:${key}`, value, ttlSeconds);
  }

  async get(scope: SessionScope, key: string): Promise<unknown> {
    return this.read(`${sessionKey(scope)}:ctx:${key}`);
  }

  async delete(scope: SessionScope, key: string): Promise<void> {
    this.entries.delete(`${sessionKey(scope)}:ctx:${key}`);
  }

  async getContext(scope: SessionScope): Promise<Record<string, unknown>> {
    const prefix = `${sessionKey(scope)}:ctx:`;
    const out: Record<string, unknown> = {};
    for (const key of [...this.entries.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const value = this.read(key);
      if (value !== undefined) out[key.slice(prefix.length)] = value;
    }
    return out;
  }

  async pushThought(scope: SessionScope, thought: string): Promise<void> {
    this.pushCapped(`${sessionKey(scope)}:thoughts`, { thought, at: new Date(this.now()).toISOString() });
  }

  async getThoughts(scope: SessionScope, limit: number): Promise<Array<{ thought: string; at: string }>> {
    return (this.read<Array<{ thought: string; at: string }>>(`${sessionKey(scope)}:thoughts`) ?? []).slice(0, limit);
  }

  async setActiveGoal(scope: SessionScope, goal: ActiveGoal): Promise<void> {
    this.write(`${sessionKey(scope)}:goal`, goal);
  }

  async getActiveGoal(scope: SessionScope): Promise<ActiveGoal | null> {
    return this.read<ActiveGoal>(`${sessionKey(scope)}:goal`) ?? null;
  }

  async clearSession(scope: SessionScope): Promise<void> {
    this.deletePrefix(`${sessionKey(scope)}:`);
  }

  async clearUser(scope: AccessScope): Promise<number> {
    return this.deletePrefix(userKeyPrefix(scope));
  }

  /** Drops expired entries; returns how many remain. */
  sweep(): number {
    for (const key of [...this.entries.keys()]) this.read(key);
    return this.entries.size;
  }

  private deletePrefix(prefix: string): number {
    let n = 0;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix) && this.entries.delete(key)) n++;
    return n;
  }
}
