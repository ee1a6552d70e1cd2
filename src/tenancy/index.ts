export * from './contract';
export { PgTenantStore } from './pg-tenant-store';
export { UserDataStore, type ExportLine, type NodeRef, type UserStats, type ErasureReport } from './user-data-store';
