export * from './contract';
export { PgShortTermStore } from './pg-short-term-store';
export { ShortTermMemory } from './short-term-memory';
