import { Redis, Cluster } from 'ioredis';
import type { Config } from '../config';

export type RedisClient = Redis | Cluster;

/**
 * A single Redis or a Redis Cluster, from configuration alone. Commands fail fast while
 * disconnected (no offline queue) so callers can degrade instead of hanging.
 */
export function createRedis(config: Config['redis']): RedisClient {
  const common = { keyPrefix: config.keyPrefix || undefined, enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false };
  if (config.clusterNodes && config.clusterNodes.length > 0) {
    return new Cluster(config.clusterNodes, { redisOptions: common, enableOfflineQueue: false });
  }
  const client = new Redis(config.url, {
    ...common,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  // Errors surface through failed commands; the reconnect loop handles the rest.
  client.on('error', () => undefined);
  return client;
}
