export * from './contract';
export { Neo4jEpisodicStore, turnEmbeddingText } from './neo4j-episodic-store';
export { PgTurnLog } from './pg-turn-log';
export { BackgroundEmbedder, turnBacklog, type EmbeddingBacklog } from './background-embedder';
export { Neo4jConversationUpkeep } from './neo4j-conversation-upkeep';
export { Neo4jConversationBrowser } from './neo4j-conversation-browser';
