export * from './contract';
export { PgTenantStore } from './pg-tenant-store';
export { UserDataStore } from './user-data-store';
export { UserWriteFence, type FencePass } from './user-fence';
export { Neo4jUserGraph } from './neo4j-user-graph';
export { PgUserRows } from './pg-user-rows';
export { RedisUserKeys } from './redis-user-keys';
export type { AgentView, ExportLine, NodeRef, UserStats, ErasureReport, UserDataPart, ImportCounts } from './user-data';
export { emptyErasureReport } from './user-data';
