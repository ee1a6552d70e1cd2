export * from './contract';
export { AUDIT_SURFACES, NO_ACTOR, currentActor, setProcessActor, withActor } from './actor';
export { returnedIds } from './returned-ids';
export { PgAuditLogger, spoolFolder } from './pg-audit-logger';
export { PERSONAL_AUDIT_COLUMNS, PgAuditTrail } from './pg-audit-trail';
export { PgAuditChain } from './pg-audit-chain';
export { erasureCounts, erasureReceipt, parseErasureReceipt, verifyErasureReceipt, type ReceiptReport } from './erasure-receipt';
export { PgAuditReader } from './pg-audit-reader';
export { CSV_COLUMNS, EXPORT_CONTENT_TYPES, exportStream, mapRows, withExternalAffected } from './export';
