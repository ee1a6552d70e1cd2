import { StoreUnavailableError } from '../errors';
import type { RedisClient } from '../infra/redis';
import { userScope } from '../access';
import type { WorkingMemoryStore } from '../working';
import { chunks, type ErasureReport, type ExportLine, type ImportCounts, type UserDataPart, type UserStats } from './user-data';

/**
 * The user's Redis keys in any subsystem (working memory first, through its store).
 * Ephemeral: counted and erased, never exported.
 */
export class RedisUserKeys implements UserDataPart {
  readonly kind = 'redis';
  readonly tables: readonly string[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly working: WorkingMemoryStore,
  ) {}

  owns(): boolean {
    return false;
  }

  async stats(userId: string, into: UserStats): Promise<void> {
    into.workingKeys += (await this.keys(userId)).length;
  }

  async *export(): AsyncGenerator<ExportLine> {}

  async check(): Promise<void> {}

  async import(): Promise<ImportCounts> {
    return { nodes: 0, relationships: 0, rows: 0 };
  }

  async erase(userId: string, report: ErasureReport): Promise<void> {
    this.requireRedis();
    let deleted = await this.working.clearUser(userScope(userId));
    for (const batch of chunks(await this.keys(userId), 500)) deleted += await this.redis.del(...batch);
    report.redisKeysDeleted += deleted;
  }

  private requireRedis(): void {
    if (this.redis.status !== 'ready') throw new StoreUnavailableError('redis', `Redis is unavailable (${this.redis.status}); the user's Redis keys cannot be listed or erased now, retry`);
  }

  /**
   * Keys of the user in any subsystem: segments are ':'-separated and ids contain no glob
   * characters. While Redis is down the keys cannot be listed (nor erased): 503, so an
   * erasure is retried until it is whole rather than answered half done.
   */
  private async keys(userId: string): Promise<string[]> {
    this.requireRedis();
    const prefix = (this.redis.options as { keyPrefix?: string }).keyPrefix ?? '';
    const found = new Set<string>();
    for (const pattern of [`${prefix}*:${userId}:*`, `${prefix}*:${userId}`]) {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const k of keys) found.add(k.slice(prefix.length));
      } while (cursor !== '0');
    }
    return [...found];
  }
}
