export * from './contract';
export { PgAuditLogger } from './pg-audit-logger';
export { PgAuditTrail } from './pg-audit-trail';
