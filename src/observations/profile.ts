import type pg from 'pg';
import type { Queryable } from '../infra/postgres';
import { normalizeJsonValues } from '../extraction/llm-output';
import { PgUserRows } from '../tenancy/pg-user-rows';
import type { UserDataPart } from '../tenancy/user-data';

/**
 * The per-user profile of seed 000: a schema-free JSON "information scaffold" whose keys
 * come from what was learned (works_at, lives_in, likes, plans...) and a short working
 * narrative (at most ~500 words) rewritten from it on every consolidation.
 */
export type ProfileValue = string | number | boolean | ProfileValue[] | { [key: string]: ProfileValue };
export type Profile = Record<string, ProfileValue>;

export interface UserProfile {
  userId: string;
  profile: Profile;
  narrative: string | null;
  updatedAt: string | null;
}

/** What the profile learns from one fact. */
export interface ProfileFact {
  claim: string;
  relation: string;
  object?: string;
  polarity: 'positive' | 'negative';
  singleValued: boolean;
  temporal: 'current' | 'past' | 'future';
  /** A change of state ("I left Feedzai"): the value (every value, without an object) leaves the profile. */
  ends?: boolean;
}

/** A stored fact's profile form (claim, predicate, tense, the properties consolidation gave it); null without a predicate. */
export function profileFactOf(f: { claim: string; predicate: string | null; temporal: string | null; properties: Record<string, unknown> }): ProfileFact | null {
  if (!f.predicate) return null;
  const p = f.properties;
  return {
    claim: f.claim,
    relation: f.predicate,
    object: typeof p.object === 'string' ? p.object : undefined,
    polarity: p.polarity === 'negative' ? 'negative' : 'positive',
    singleValued: p.single_valued === true,
    temporal: f.temporal === 'past' || f.temporal === 'future' ? f.temporal : 'current',
  };
}

const LIST_CAP = 20;
export const NARRATIVE_MAX_WORDS = 500;

function addTo(list: ProfileValue | undefined, item: string): string[] {
  const arr = Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : typeof list === 'string' ? [list] : [];
  const next = arr.filter((x) => x.toLowerCase() !== item.toLowerCase());
  next.push(item);
  return next.slice(-LIST_CAP);
}
function removeFrom(list: ProfileValue | undefined, item: string): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.filter((x): x is string => typeof x === 'string' && x.toLowerCase() !== item.toLowerCase());
}

/**
 * Folds facts into a profile (a new object; the input is not changed). Current single-valued
 * facts set a key, multi-valued ones add to a list (a negative one moves the value to
 * `not_<relation>`), past facts go to `history`, future ones to `plans`; a change of state
 * (`ends`) takes its value out of the key and records the change in `history`.
 */
export function mergeProfile(profile: Profile, facts: ProfileFact[], notes: Array<{ category: string; content: string }> = []): Profile {
  const p: Profile = { ...(normalizeJsonValues(profile) as Profile) };
  for (const f of facts) {
    const value = f.object ?? f.claim;
    if (f.ends) {
      const current = p[f.relation];
      if (f.object === undefined || (typeof current === 'string' && current.toLowerCase() === f.object.toLowerCase())) delete p[f.relation];
      else {
        const kept = removeFrom(current, f.object);
        if (kept) p[f.relation] = kept;
      }
      p.history = addTo(p.history, f.claim);
      continue;
    }
    if (f.temporal === 'past') {
      p.history = addTo(p.history, f.claim);
      continue;
    }
    if (f.temporal === 'future') {
      p.plans = addTo(p.plans, f.claim);
      continue;
    }
    if (f.polarity === 'negative') {
      p[`not_${f.relation}`] = addTo(p[`not_${f.relation}`], value);
      const kept = removeFrom(p[f.relation], value);
      if (kept) p[f.relation] = kept;
      continue;
    }
    if (f.singleValued) {
      p[f.relation] = value;
    } else {
      p[f.relation] = addTo(p[f.relation], value);
      const kept = removeFrom(p[`not_${f.relation}`], value);
      if (kept) p[`not_${f.relation}`] = kept;
    }
  }
  for (const n of notes) p[n.category] = addTo(p[n.category], n.content);
  return p;
}

/**
 * Takes forgotten facts out of a profile (a new object; the input is not changed): each
 * fact's value leaves its key (and `not_<relation>`), its claim leaves `history`, `plans` and
 * the notes' lists. Then `restored` facts (current again because what replaced them was
 * forgotten) are folded back in as mergeProfile folds them.
 */
export function forgetProfile(profile: Profile, forgotten: ProfileFact[], restored: ProfileFact[] = []): Profile {
  const p: Profile = { ...(normalizeJsonValues(profile) as Profile) };
  const drop = (key: string, item: string) => {
    const current = p[key];
    if (typeof current === 'string' && current.toLowerCase() === item.toLowerCase()) delete p[key];
    const kept = removeFrom(current, item);
    if (kept === undefined) return;
    if (kept.length > 0) p[key] = kept;
    else delete p[key];
  };
  for (const f of forgotten) {
    const value = f.object ?? f.claim;
    for (const key of [f.relation, `not_${f.relation}`]) drop(key, value);
    for (const key of Object.keys(p)) if (Array.isArray(p[key])) drop(key, f.claim);
  }
  return mergeProfile(p, restored);
}

/** One value of a profile: a key's string (or each string of its list). */
export interface ProfileEntry {
  key: string;
  value: string;
}

function entries(profile: Profile): ProfileEntry[] {
  return Object.entries(profile).flatMap(([key, v]) => (Array.isArray(v) ? v : [v]).map((x) => ({ key, value: typeof x === 'string' ? x : JSON.stringify(x) })));
}

/** What changed between two profiles: the entries that went and those that came. */
export function profileChanges(before: Profile, after: Profile): { removed: ProfileEntry[]; added: ProfileEntry[] } {
  const id = (e: ProfileEntry) => `${e.key}\u0000${e.value.toLowerCase()}`;
  const a = entries(after);
  const b = entries(before);
  const inAfter = new Set(a.map(id));
  const inBefore = new Set(b.map(id));
  return { removed: b.filter((e) => !inAfter.has(id(e))), added: a.filter((e) => !inBefore.has(id(e))) };
}

function words(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

/** A short narrative: what the profile says, then the latest things learned; capped at NARRATIVE_MAX_WORDS. */
export function renderNarrative(profile: Profile, recent: string[]): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(profile)) {
    if (key === 'history' || key === 'plans') continue;
    const label = key.replace(/_/g, ' ');
    if (Array.isArray(value)) {
      if (value.length > 0) lines.push(`${label}: ${value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}.`);
    } else if (typeof value === 'object') {
      lines.push(`${label}: ${JSON.stringify(value)}.`);
    } else {
      lines.push(`${label}: ${String(value)}.`);
    }
  }
  const plans = Array.isArray(profile.plans) ? profile.plans : [];
  if (plans.length > 0)
    lines.push(
      `Plans: ${plans
        .slice(-3)
        .map((p) => (typeof p === 'string' ? p : JSON.stringify(p)))
        .join('; ')}.`,
    );
  if (recent.length > 0) lines.push(`Recently learned: ${recent.slice(-5).join('; ')}.`);
  const out: string[] = [];
  let count = 0;
  for (const line of lines) {
    if (count + words(line) > NARRATIVE_MAX_WORDS) break;
    out.push(line);
    count += words(line);
  }
  return out.join(' ');
}

interface ProfileRow {
  user_id: string;
  profile: Profile;
  narrative: string | null;
  updated_at: Date | null;
}

// $1 user -> {user_id, profile, narrative, updated_at}; FOR UPDATE so concurrent consolidations of one user queue up
const GET_FOR_UPDATE = 'SELECT user_id, profile, narrative, updated_at FROM user_profiles WHERE user_id = $1 FOR UPDATE';
const GET = 'SELECT user_id, profile, narrative, updated_at FROM user_profiles WHERE user_id = $1';
// $1 user -> creates an empty profile row when missing
const ENSURE = 'INSERT INTO user_profiles (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING';
// $1 user, $2 profile, $3 narrative -> updates both
const SAVE = `UPDATE user_profiles SET profile = $2, narrative = $3, narrative_updated_at = NOW(), updated_at = NOW() WHERE user_id = $1`;

/** `user_profiles` access; pass the open transaction so the update commits with the work it reflects. */
export class PgProfileStore {
  /** `pool` runs `learn` in a transaction of its own when the caller has none. */
  constructor(private readonly pool?: pg.Pool) {}

  async get(q: Queryable, userId: string): Promise<UserProfile> {
    const r = await q.query<ProfileRow>(GET, [userId]);
    return toProfile(userId, r.rows[0]);
  }

  /** Reads the profile with a row lock held until the caller's transaction ends. */
  async getForUpdate(q: Queryable, userId: string): Promise<UserProfile> {
    await q.query(ENSURE, [userId]);
    const r = await q.query<ProfileRow>(GET_FOR_UPDATE, [userId]);
    return toProfile(userId, r.rows[0]);
  }

  async save(q: Queryable, userId: string, profile: Profile, narrative: string): Promise<void> {
    await q.query(ENSURE, [userId]);
    await q.query(SAVE, [userId, JSON.stringify(profile), narrative]);
  }

  /**
   * Folds learned facts and notes into the user's profile (mergeProfile) and rewrites the
   * narrative from it and `recent`, under the row lock: in `tx` when given, so it commits
   * with the work it reflects, else in a transaction of its own (rolled back on failure).
   */
  async learn(userId: string, facts: ProfileFact[], notes: Array<{ category: string; content: string }>, recent: string[], tx?: Queryable): Promise<void> {
    const apply = async (q: Queryable) => {
      const current = await this.getForUpdate(q, userId);
      const profile = mergeProfile(current.profile, facts, notes);
      await this.save(q, userId, profile, renderNarrative(profile, recent));
    };
    if (tx) return apply(tx);
    await this.inTransaction(apply);
  }

  private async inTransaction(work: (q: Queryable) => Promise<void>): Promise<void> {
    if (!this.pool) throw new Error('PgProfileStore needs a transaction or a pool');
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Takes forgotten facts out of the user's profile and folds restored ones back in
   * (forgetProfile), under the row lock, and rewrites the narrative from what remains; with
   * `dryRun` only says what would change. A user without a profile row has nothing to forget.
   */
  async forget(userId: string, forgotten: ProfileFact[], restored: ProfileFact[], dryRun = false): Promise<{ removed: ProfileEntry[]; added: ProfileEntry[] }> {
    const none = { removed: [], added: [] };
    if (forgotten.length === 0 && restored.length === 0) return none;
    let changes: { removed: ProfileEntry[]; added: ProfileEntry[] } = none;
    await this.inTransaction(async (q) => {
      const current = (await q.query<ProfileRow>(dryRun ? GET : GET_FOR_UPDATE, [userId])).rows[0];
      if (!current) return;
      const profile = forgetProfile(current.profile, forgotten, restored);
      changes = profileChanges(normalizeJsonValues(current.profile) as Profile, profile);
      if (!dryRun) await q.query(SAVE, [userId, JSON.stringify(profile), renderNarrative(profile, [])]);
    });
    return changes;
  }

  /** The user's `user_profiles` row, for whole-user export, import and erasure (needs the pool). */
  userData(): UserDataPart {
    if (!this.pool) throw new Error('PgProfileStore.userData needs a pool');
    return new PgUserRows(this.pool, 'profiles', ['user_profiles']);
  }
}

function toProfile(userId: string, row: ProfileRow | undefined): UserProfile {
  return { userId, profile: row?.profile ?? {}, narrative: row?.narrative ?? null, updatedAt: row?.updated_at ? row.updated_at.toISOString() : null };
}
