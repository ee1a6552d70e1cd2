// 004_vector_indexes: cosine vector indexes on every embedded label.
// Parameters: {{EMBEDDING_DIMENSIONS}} is the configured embedding model's dimension
// (an integer checked by the runner before substitution). The model and dimension are
// recorded on the (:EmbeddingModel) node; a later start with another model is refused.
CREATE VECTOR INDEX turn_embeddings IF NOT EXISTS FOR (n:Turn) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX entity_embeddings IF NOT EXISTS FOR (n:Entity) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX fact_embeddings IF NOT EXISTS FOR (n:Fact) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX strategy_embeddings IF NOT EXISTS FOR (n:Strategy) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX goal_embeddings IF NOT EXISTS FOR (n:Goal) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
