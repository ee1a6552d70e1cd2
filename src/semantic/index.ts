export * from './contract';
export { Neo4jSemanticStore, belowThresholds } from './neo4j-semantic-store';
export { normalizeName, nameKeys, mergeAliases, pickNameMatch, normalizeClaim, typesCompatible } from './names';
export * from './semantic-memory';
export { Neo4jSemanticUpkeep } from './neo4j-semantic-upkeep';
export { Neo4jKnowledgeCuration } from './neo4j-knowledge-curation';
