// 010_turn_embedded_at: when a turn's embedding was last set (`embedded_at`, Neo4j's
// timestamp() in ms), indexed with its owner. Recall ranks a small user's turns by vector
// from the embeddings it holds in memory (src/infra/owner-vectors.ts) and asks Neo4j, in the
// same statement, for the turns embedded since it read them: this index makes that a seek
// instead of a read of every turn of the user. Turns embedded before it have no
// `embedded_at`; a recall process reads their embeddings once and finds them unchanged.
// Parameters: none.
CREATE INDEX turn_user_embedded_at IF NOT EXISTS FOR (n:Turn) ON (n.user_id, n.embedded_at);
