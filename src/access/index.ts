export * from './scope';
export * from './namespace';
export { KEY_ROLES, MEMORY_ROLES, REVIEW_ROLES, type KeyRole } from './roles';
