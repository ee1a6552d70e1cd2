import type { AccessScope } from '../access';

/**
 * The live session of one user in one channel and conversation: the caller's AccessScope
 * (the session is `scope.channel`'s) plus the conversation.
 */
export interface SessionScope extends AccessScope {
  readonly conversationId: string;
}

/** The session of `conversationId` within `scope`. */
export function sessionScope(scope: AccessScope, conversationId: string): SessionScope {
  return Object.freeze({ ...scope, conversationId });
}

export interface WorkingTurn {
  id: string;
  role: string;
  content: string;
  timestamp: string;
  index: number;
}

export interface ActiveGoal {
  goalId: string;
  description: string;
}

/**
 * Working memory: fast, ephemeral, per session. Every key expires (default 1 h, renewed on
 * write). Implementations must not throw for a store outage they can absorb; the Redis
 * one is wrapped by a failover store that keeps serving from process memory.
 */
export interface WorkingMemoryStore {
  /** Prepends turns (given oldest first) in one write; keeps the newest `maxTurns`. */
  addTurns(scope: SessionScope, turns: WorkingTurn[]): Promise<void>;
  /** Newest first, at most `limit`. */
  getRecentTurns(scope: SessionScope, limit: number): Promise<WorkingTurn[]>;
  /**
   * Removes the session's recent turns with these indexes (a turn deleted from the episodic
   * store must not come back from working memory); resolves with how many went. The other
   * turns keep their order and the list its TTL. Unknown indexes are ignored.
   */
  removeTurns(scope: SessionScope, indexes: readonly number[]): Promise<number>;
  /** Sets a context value with its own TTL (seconds; default the store's TTL). */
  set(scope: SessionScope, key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  get(scope: SessionScope, key: string): Promise<unknown>;
  delete(scope: SessionScope, key: string): Promise<void>;
  /** Every live context value of the session. */
  getContext(scope: SessionScope): Promise<Record<string, unknown>>;
  pushThought(scope: SessionScope, thought: string): Promise<void>;
  /** Newest first. */
  getThoughts(scope: SessionScope, limit: number): Promise<Array<{ thought: string; at: string }>>;
  setActiveGoal(scope: SessionScope, goal: ActiveGoal): Promise<void>;
  getActiveGoal(scope: SessionScope): Promise<ActiveGoal | null>;
  /** Removes every key of the session. */
  clearSession(scope: SessionScope): Promise<void>;
  /** Removes every session of the scope's user (all channels and conversations, whatever `scope.channels` says). */
  clearUser(scope: AccessScope): Promise<number>;
}

/** `working:{user}:`: the prefix of every key of one user's sessions. */
export function userKeyPrefix(scope: AccessScope): string {
  return `working:${scope.userId}:`;
}

/** `working:{user}:{channel}:{conversation}`: the key prefix of seed 003. */
export function sessionKey(scope: SessionScope): string {
  return `${userKeyPrefix(scope)}${scope.channel}:${scope.conversationId}`;
}
