import type { RedisClient } from '../infra/redis';
import type { AccessScope } from '../access';
import { sessionKey, userKeyPrefix, type ActiveGoal, type SessionScope, type WorkingMemoryStore, type WorkingTurn } from './contract';

/**
 * Keys (all with TTL):
 *   working:{u}:{c}:{conv}:turns       list of JSON turns, newest first, capped
 *   working:{u}:{c}:{conv}:thoughts    list of JSON thoughts, newest first, capped
 *   working:{u}:{c}:{conv}:ctx:{key}   string, JSON value, its own TTL
 *   working:{u}:{c}:{conv}:ctxkeys     set of context keys (pruned as values expire)
 *   working:{u}:{c}:{conv}:goal        string, JSON active goal
 * User ids, channels and conversation ids are validated upstream and never contain ':'
 * ambiguity that could reach another user's keys ({u} is always the first segment).
 */
export class RedisWorkingStore implements WorkingMemoryStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
    private readonly maxTurns: number,
  ) {}

  async addTurns(scope: SessionScope, turns: WorkingTurn[]): Promise<void> {
    if (turns.length === 0) return;
    const key = `${sessionKey(scope)}:turns`;
    // LPUSH of several values leaves the last one at the head: newest first, as read.
    await this.redis
      .multi()
      .lpush(key, ...turns.map((t) => JSON.stringify(t)))
      .ltrim(key, 0, this.maxTurns - 1)
      .expire(key, this.ttlSeconds)
      .exec()
      .then(check);
  }

  async getRecentTurns(scope: SessionScope, limit: number): Promise<WorkingTurn[]> {
    const rows = await this.redis.lrange(`${sessionKey(scope)}:turns`, 0, limit - 1);
    return rows.map((r) => JSON.parse(r) as WorkingTurn);
  }

  async removeTurns(scope: SessionScope, indexes: readonly number[]): Promise<number> {
    if (indexes.length === 0) return 0;
    const key = `${sessionKey(scope)}:turns`;
    const wanted = new Set(indexes);
    // The list is capped (maxTurns), so reading it whole is bounded. LREM by the exact stored
    // value removes that turn wherever a concurrent LPUSH has moved it meanwhile.
    const raw = (await this.redis.lrange(key, 0, -1)).filter((r) => wanted.has((JSON.parse(r) as WorkingTurn).index));
    if (raw.length === 0) return 0;
    const m = this.redis.multi();
    for (const r of raw) m.lrem(key, 0, r);
    const results = await m.exec();
    check(results);
    return (results ?? []).reduce((n, [, removed]) => n + Number(removed), 0);
  }

  async set(scope: SessionScope, key: string, value: unknown, ttlSeconds = this.ttlSeconds): Promise<void> {
    const base = sessionKey(scope);
    await this.redis
      .multi()
      .set(`${base}:ctx:${key}`, JSON.stringify(value), 'EX', ttlSeconds)
      .sadd(`${base}:ctxkeys`, key)
      .expire(`${base}:ctxkeys`, Math.max(ttlSeconds, this.ttlSeconds))
      .exec()
      .then(check);
  }

  async get(scope: SessionScope, key: string): Promise<unknown> {
    const raw = await this.redis.get(`${sessionKey(scope)}:ctx:${key}`);
    return raw === null ? undefined : (JSON.parse(raw) as unknown);
  }

  async delete(scope: SessionScope, key: string): Promise<void> {
    const base = sessionKey(scope);
    await this.redis.multi().del(`${base}:ctx:${key}`).srem(`${base}:ctxkeys`, key).exec().then(check);
  }

  async getContext(scope: SessionScope): Promise<Record<string, unknown>> {
    const base = sessionKey(scope);
    const keys = await this.redis.smembers(`${base}:ctxkeys`);
    if (keys.length === 0) return {};
    const values = await this.redis.mget(...keys.map((k) => `${base}:ctx:${k}`));
    const out: Record<string, unknown> = {};
    const expired: string[] = [];
    keys.forEach((k, i) => {
      const raw = values[i];
      if (raw == null) expired.push(k);
      else out[k] = JSON.parse(raw) as unknown;
    });
    if (expired.length > 0) await this.redis.srem(`${base}:ctxkeys`, ...expired);
    return out;
  }

  async pushThought(scope: SessionScope, thought: string): Promise<void> {
    const key = `${sessionKey(scope)}:thoughts`;
    await this.redis
      .multi()
      .lpush(key, JSON.stringify({ thought, at: new Date().toISOString() }))
      .ltrim(key, 0, this.maxTurns - 1)
      .expire(key, this.ttlSeconds)
      .exec()
      .then(check);
  }

  async getThoughts(scope: SessionScope, limit: number): Promise<Array<{ thought: string; at: string }>> {
    return (await this.redis.lrange(`${sessionKey(scope)}:thoughts`, 0, limit - 1)).map((r) => JSON.parse(r) as { thought: string; at: string });
  }

  async setActiveGoal(scope: SessionScope, goal: ActiveGoal): Promise<void> {
    await this.redis.set(`${sessionKey(scope)}:goal`, JSON.stringify(goal), 'EX', this.ttlSeconds);
  }

  async getActiveGoal(scope: SessionScope): Promise<ActiveGoal | null> {
    const raw = await this.redis.get(`${sessionKey(scope)}:goal`);
    return raw === null ? null : (JSON.parse(raw) as ActiveGoal);
  }

  async clearSession(scope: SessionScope): Promise<void> {
    const base = sessionKey(scope);
    const ctxKeys = await this.redis.smembers(`${base}:ctxkeys`);
    await this.redis.del(`${base}:turns`, `${base}:thoughts`, `${base}:goal`, `${base}:ctxkeys`, ...ctxKeys.map((k) => `${base}:ctx:${k}`));
  }

  async clearUser(scope: AccessScope): Promise<number> {
    // SCAN (not KEYS) so a large keyspace is walked without blocking Redis. The configured
    // key prefix is applied by ioredis to commands but not to SCAN patterns.
    const prefix = (this.redis.options as { keyPrefix?: string }).keyPrefix ?? '';
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}${userKeyPrefix(scope)}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await this.redis.del(...keys.map((k) => k.slice(prefix.length)));
    } while (cursor !== '0');
    return deleted;
  }
}

function check(results: Array<[Error | null, unknown]> | null): void {
  const failed = results?.find(([err]) => err);
  if (failed?.[0]) throw failed[0];
}
