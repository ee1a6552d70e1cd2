export * from './contract';
export { Neo4jProceduralStore, successRate } from './neo4j-procedural-store';
export { PgToolInvocationLog } from './pg-tool-invocation-log';
export { fuseStrategies, strategyId } from './ranking';
export { ProceduralMemory } from './procedural-memory';
