export * from './contract';
export { RedisWorkingStore } from './redis-working-store';
export { MemoryWorkingStore } from './memory-working-store';
export { FailoverWorkingStore } from './failover-working-store';
