export * from './contract';
export { Forgetter, type DeleteRequest, type DeleteResult, type ForgetterDeps } from './forgetter';
export { Neo4jDerivedKnowledge } from './neo4j-derived-knowledge';
