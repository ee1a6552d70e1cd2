// 011_knowledge_embedded_at: `embedded_at` (Neo4j's timestamp() in ms when the embedding was
// last set) on facts and entities, indexed with their owner, as 010 for turns: recall ranks a
// small user's facts and entities by vector from the embeddings it holds in memory
// (src/infra/owner-vectors.ts) and asks Neo4j, in the same statement, for those embedded
// since it read them. Nodes embedded before it have none; a recall process reads their
// embeddings once and finds them unchanged.
// Parameters: none.
CREATE INDEX fact_user_embedded_at IF NOT EXISTS FOR (n:Fact) ON (n.user_id, n.embedded_at);
CREATE INDEX entity_user_embedded_at IF NOT EXISTS FOR (n:Entity) ON (n.user_id, n.embedded_at);
