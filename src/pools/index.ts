export * from './contract';
export { Neo4jPoolStore } from './neo4j-pool-store';
export { PoolMemory, type PoolMemoryDeps } from './pool-memory';
export { searchPools, type PoolSearchHit } from './search';
export { effectiveRelevance, staleness, minStaleAgeDays, adjustImportance } from './relevance';
export { canRead, canWrite, canAdmin } from './access';
