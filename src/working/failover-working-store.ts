import type { AccessScope } from '../access';
import type { Logger } from '../infra/logger';
import type { ActiveGoal, SessionScope, WorkingMemoryStore, WorkingTurn } from './contract';

/**
 * Serves working memory from Redis while it answers and from process memory while it does
 * not, with a logged warning at each switch. `primaryReady` says when Redis is back; the
 * next call then returns to it. A user erase clears both stores.
 */
export class FailoverWorkingStore implements WorkingMemoryStore {
  private degraded = false;

  constructor(
    private readonly primary: WorkingMemoryStore,
    private readonly fallback: WorkingMemoryStore,
    private readonly primaryReady: () => boolean,
    private readonly log: Logger,
  ) {}

  /** True while serving from process memory. */
  get isDegraded(): boolean {
    return this.degraded;
  }

  private async route<T>(op: string, call: (store: WorkingMemoryStore) => Promise<T>): Promise<T> {
    if (this.degraded && this.primaryReady()) {
      this.degraded = false;
      this.log.info({ subsystem: 'working' }, 'Redis is back; working memory serves from Redis again');
    }
    if (!this.degraded) {
      try {
        return await call(this.primary);
      } catch (err) {
        this.degraded = true;
        this.log.warn({ subsystem: 'working', op, err: (err as Error).message }, 'Redis unreachable; working memory serves from process memory');
      }
    }
    return call(this.fallback);
  }

  addTurns(scope: SessionScope, turns: WorkingTurn[]) {
    return this.route('addTurns', (s) => s.addTurns(scope, turns));
  }
  getRecentTurns(scope: SessionScope, limit: number) {
    return this.route('getRecentTurns', (s) => s.getRecentTurns(scope, limit));
  }
  /** From both stores: a turn the fallback kept while Redis was down must go too. */
  async removeTurns(scope: SessionScope, indexes: readonly number[]): Promise<number> {
    const [fallback, primary] = await Promise.all([this.fallback.removeTurns(scope, indexes), this.route('removeTurns', (s) => s.removeTurns(scope, indexes))]);
    return Math.max(fallback, primary);
  }
  set(scope: SessionScope, key: string, value: unknown, ttlSeconds?: number) {
    return this.route('set', (s) => s.set(scope, key, value, ttlSeconds));
  }
  get(scope: SessionScope, key: string) {
    return this.route('get', (s) => s.get(scope, key));
  }
  delete(scope: SessionScope, key: string) {
    return this.route('delete', (s) => s.delete(scope, key));
  }
  getContext(scope: SessionScope) {
    return this.route('getContext', (s) => s.getContext(scope));
  }
  pushThought(scope: SessionScope, thought: string) {
    return this.route('pushThought', (s) => s.pushThought(scope, thought));
  }
  getThoughts(scope: SessionScope, limit: number) {
    return this.route('getThoughts', (s) => s.getThoughts(scope, limit));
  }
  setActiveGoal(scope: SessionScope, goal: ActiveGoal) {
    return this.route('setActiveGoal', (s) => s.setActiveGoal(scope, goal));
  }
  getActiveGoal(scope: SessionScope) {
    return this.route('getActiveGoal', (s) => s.getActiveGoal(scope));
  }
  clearSession(scope: SessionScope) {
    return Promise.all([this.fallback.clearSession(scope), this.route('clearSession', (s) => s.clearSession(scope))]).then(() => undefined);
  }
  /** Redis's count: the fallback holds copies of keys made while Redis was down, not keys of their own. */
  async clearUser(scope: AccessScope): Promise<number> {
    await this.fallback.clearUser(scope);
    // Erasure must reach Redis too: let its failure surface instead of degrading silently.
    return this.primary.clearUser(scope);
  }
}
