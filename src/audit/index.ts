export * from './contract';
export { PgAuditLogger } from './pg-audit-logger';
export { PgAuditTrail } from './pg-audit-trail';
export { PgAuditReader } from './pg-audit-reader';
export { CSV_COLUMNS, EXPORT_CONTENT_TYPES, exportStream, mapRows, withExternalAffected } from './export';
