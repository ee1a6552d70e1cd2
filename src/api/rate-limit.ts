import { MemoryStore, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import type { RedisClient } from '../infra/redis';

// KEYS[1] counter key, ARGV[1] window ms -> {hits, ttl ms}: fixed window, expiry set by the first hit
const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {hits, ttl}`;

/**
 * Rate-limit counters in Redis, so every API instance shares one budget per key. While
 * Redis is down the counts fall back to this process's memory: limiting stays on (per
 * instance) instead of failing open or failing every request.
 */
export class RedisRateLimitStore implements Store {
  private windowMs = 60_000;
  private readonly fallback = new MemoryStore();
  constructor(
    private readonly redis: RedisClient,
    readonly prefix = 'ratelimit:',
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
    this.fallback.init(options);
  }

  async increment(key: string): Promise<IncrementResponse> {
    try {
      const [hits, ttl] = (await this.redis.eval(INCREMENT, 1, this.prefix + key, String(this.windowMs))) as [number, number];
      return { totalHits: hits, resetTime: new Date(Date.now() + ttl) };
    } catch {
      return this.fallback.increment(key);
    }
  }

  async decrement(key: string): Promise<void> {
    await this.redis.decr(this.prefix + key).catch(() => this.fallback.decrement(key));
  }

  async resetKey(key: string): Promise<void> {
    await this.redis.del(this.prefix + key).catch(() => this.fallback.resetKey(key));
  }

  shutdown(): void {
    this.fallback.shutdown();
  }
}
