export * from './scope';
export * from './namespace';
export { AUDIT_ROLES, ERASE_ROLES, KEY_ROLES, MEMORY_ROLES, REVIEW_ROLES, type KeyRole } from './roles';
