export * from './contract';
export { PgAuditLogger } from './pg-audit-logger';
