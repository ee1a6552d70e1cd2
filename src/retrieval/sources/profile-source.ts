import type { Queryable } from '../../infra/postgres';
import type { UserProfile } from '../../observations/profile';
import type { ProfileSource } from '../contract';

export interface ProfileReader {
  get(q: Queryable, userId: string): Promise<UserProfile>;
}

/**
 * The user profile for recall, from `user_profiles` (written by consolidation, see
 * src/observations): the schema-free `profile` keys, plus `narrative` when one was written.
 * Null when the user has neither, so an empty profile never reaches a prompt.
 */
export class PgProfileSource implements ProfileSource {
  constructor(
    private readonly db: Queryable,
    private readonly profiles: ProfileReader,
  ) {}

  async getProfile(userId: string): Promise<Record<string, unknown> | null> {
    const p = await this.profiles.get(this.db, userId);
    const keys = Object.keys(p.profile);
    if (keys.length === 0 && !p.narrative) return null;
    return { ...p.profile, ...(p.narrative ? { narrative: p.narrative } : {}) };
  }
}
