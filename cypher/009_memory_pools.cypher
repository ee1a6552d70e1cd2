// 009_memory_pools: shared memory pools of a tenant's agents (src/pools). A pool is
// (:MemoryPool {tenant_id, id}); its entries (:PoolEntry, the current version) carry
// tenant_id and pool_id, and their history is (:PoolEntryVersion) nodes; snapshots are
// (:PoolSnapshot) with one (:PoolSnapshotEntry) per captured entry. Pool ids are
// tenant-namespaced at the API edge, so `id` is unique on its own; tenant_id is still on
// every node and in every query. The full-text index covers `pool_key`, a token per
// (tenant, pool) (src/access `poolKey`), so a query requires the pools the agent may read
// inside Lucene, as `scope_key` does for a user's channels.
// Parameters: {{EMBEDDING_DIMENSIONS}}, the configured embedding model's dimension.
CREATE CONSTRAINT memory_pool_id_unique IF NOT EXISTS FOR (n:MemoryPool) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT pool_entry_id_unique IF NOT EXISTS FOR (n:PoolEntry) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT pool_entry_version_id_unique IF NOT EXISTS FOR (n:PoolEntryVersion) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT pool_snapshot_id_unique IF NOT EXISTS FOR (n:PoolSnapshot) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT pool_snapshot_entry_id_unique IF NOT EXISTS FOR (n:PoolSnapshotEntry) REQUIRE n.id IS UNIQUE;
CREATE INDEX memory_pool_tenant IF NOT EXISTS FOR (n:MemoryPool) ON (n.tenant_id);
CREATE INDEX memory_pool_expiry IF NOT EXISTS FOR (n:MemoryPool) ON (n.expires_at);
CREATE INDEX pool_entry_pool IF NOT EXISTS FOR (n:PoolEntry) ON (n.pool_id);
CREATE INDEX pool_entry_user IF NOT EXISTS FOR (n:PoolEntry) ON (n.user_id);
CREATE INDEX pool_entry_expiry IF NOT EXISTS FOR (n:PoolEntry) ON (n.expires_at);
CREATE INDEX pool_entry_version_entry IF NOT EXISTS FOR (n:PoolEntryVersion) ON (n.entry_id);
CREATE INDEX pool_entry_version_user IF NOT EXISTS FOR (n:PoolEntryVersion) ON (n.user_id);
CREATE INDEX pool_snapshot_pool IF NOT EXISTS FOR (n:PoolSnapshot) ON (n.pool_id);
CREATE INDEX pool_snapshot_entry_snapshot IF NOT EXISTS FOR (n:PoolSnapshotEntry) ON (n.snapshot_id);
CREATE INDEX pool_snapshot_entry_user IF NOT EXISTS FOR (n:PoolSnapshotEntry) ON (n.user_id);
CREATE FULLTEXT INDEX pool_entry_text IF NOT EXISTS FOR (n:PoolEntry) ON EACH [n.content, n.pool_key] OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE VECTOR INDEX pool_entry_embeddings IF NOT EXISTS FOR (n:PoolEntry) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: {{EMBEDDING_DIMENSIONS}}, `vector.similarity_function`: 'cosine'}};
