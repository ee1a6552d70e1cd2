import { Redis, Cluster } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** What the client is built from (`Config['redis']`; declared here so drivers do not depend on config). */
export interface RedisSettings {
  url: string;
  clusterNodes?: Array<{ host: string; port: number }>;
  keyPrefix: string;
}

/**
 * A single Redis or a Redis Cluster, from configuration alone. Commands fail fast while
 * disconnected (no offline queue) so callers can degrade instead of hanging.
 */
export function createRedis(config: RedisSettings): RedisClient {
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
