import type { UserDataPart } from '../tenancy/user-data';
import type { AgentOverride, MemorySettings, SettingsUpdate } from './schema';

export * from './schema';

/** Settings of a user who never changed them. */
export function defaultSettings(userId: string): MemorySettings {
  return { userId, memoryEnabled: true, defaultTopK: null, rerank: null, autoMine: true, agents: {}, updatedAt: null };
}

/**
 * Per-user memory settings (seed 002) in PostgreSQL (`user_memory_settings`). Read on the
 * recall hot path: `get` is one primary-key read, no cache (measured in the README), so a
 * change applies to the very next request of every process.
 */
export interface SettingsStore {
  /** The user's settings, the defaults when none were ever written. */
  get(userId: string): Promise<MemorySettings>;
  /**
   * Applies a partial update atomically (absent keys unchanged; `agents` merged by agent
   * id, a null override removed) and returns the new settings.
   */
  update(userId: string, patch: Omit<SettingsUpdate, 'userId'>): Promise<MemorySettings>;
  /** Users among `userIds` (all users when null) whose automatic mining is off or whose memory is disabled. */
  miningOff(userIds: readonly string[] | null): Promise<string[]>;
  /** The user's row, for whole-user export, import and erasure. */
  userData(): UserDataPart;
}

/** Why recall does not run for this user and agent, or null when it does. */
export function recallSkipReason(s: MemorySettings, agentId: string | null): string | null {
  if (!s.memoryEnabled) return 'memory is disabled in this user’s settings';
  const override: AgentOverride | undefined = agentId ? s.agents[agentId] : undefined;
  if (override?.recall === false) return `recall is switched off for agent ${agentId} in this user’s settings`;
  return null;
}
