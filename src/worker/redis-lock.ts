import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../infra/redis';
import type { LockService } from './contract';

// KEYS[1] lock key, ARGV[1] token -> 1 when deleted (we owned it), else 0
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
// KEYS[1] lock key, ARGV[1] token, ARGV[2] ttl ms -> 1 when extended (we own it), else 0
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

/**
 * Single-instance Redis lock: `SET key token NX PX ttl`; release and extend compare the
 * token first (in a Lua script, atomically), so an expired lock taken over by another
 * worker is never released or extended by the old owner. Keys live under `lock:`.
 */
export class RedisLockService implements LockService {
  constructor(
    private readonly redis: RedisClient,
    private readonly owner = randomUUID(),
  ) {}

  async acquire(key: string, ttlMs: number): Promise<string | null> {
    const token = `${this.owner}:${randomUUID()}`;
    const ok = await this.redis.set(`lock:${key}`, token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX');
    return ok === 'OK' ? token : null;
  }

  async extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(EXTEND, 1, `lock:${key}`, token, String(Math.round(ttlMs)))) === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    return Number(await this.redis.eval(RELEASE, 1, `lock:${key}`, token)) === 1;
  }
}
