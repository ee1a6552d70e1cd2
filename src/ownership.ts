/**
 * Who owns what in the databases: every Neo4j label and relationship type and every
 * PostgreSQL table (and SQL function) has exactly one owning module, and only that
 * module's files hold Cypher or SQL that names it. Jobs, the CLI, the API and recall call
 * the owner's named operations instead. test/unit/ownership.test.ts enforces this table
 * over every .ts file under src/; docs/ARCHITECTURE.md mirrors it.
 *
 * Schema (cypher/, sql/) is not .ts and is out of scope; `src/migrate` owns schema objects
 * and may name any declared label or table (its backfills rewrite existing data).
 */
export interface Owner {
  /** Files, or folders ending in '/', relative to the repository root. */
  readonly files: readonly string[];
  readonly labels: readonly string[];
  readonly relationships: readonly string[];
  /** Tables, and the SQL functions that belong to them. */
  readonly tables: readonly string[];
  /**
   * Other owners' labels, relationship types and tables its queries only match on: the
   * far ends of its own relationships (a fact DERIVED_FROM a turn) or a filter (a
   * conversation that used a tool). It never writes them.
   */
  readonly reads?: readonly string[];
  /** Why its queries may name labels, types or tables only at run time (from the catalog, or chosen by the caller). */
  readonly generic?: string;
  /** Owns the schema: may name every declared label, relationship type and table. */
  readonly schema?: boolean;
}

export const OWNERS: Readonly<Record<string, Owner>> = {
  episodic: {
    files: ['src/episodic/'],
    // The User node is the user's anchor: created with the first conversation, it holds the
    // speakers of the user's turns. Other stores attach their HAS_* relationships to it (MERGE by id).
    labels: ['User', 'Conversation', 'Turn'],
    relationships: ['HAS_CONVERSATION', 'HAS_TURN', 'FOLLOWED_BY'],
    // memory_timeline is reserved (sql/001): nothing writes it yet; its rows are the user's.
    tables: ['conversation_logs', 'memory_timeline'],
    reads: ['USED_TOOL', 'ToolInvocation'],
  },
  semantic: {
    files: ['src/semantic/'],
    labels: ['Entity', 'Fact'],
    relationships: ['HAS_ENTITY', 'HAS_FACT', 'ABOUT', 'DERIVED_FROM', 'MENTIONS', 'SUPERSEDES', 'CONTRADICTS', 'PROMOTED_FROM'],
    tables: [],
    // Turns: a fact's DERIVED_FROM source and recall's metadata filter on an entity's conversations.
    reads: ['User', 'Conversation', 'Turn', 'HAS_TURN'],
    generic: 'typed relationships between two entities have caller-chosen types ($($type))',
  },
  procedural: {
    files: ['src/procedural/'],
    labels: ['Strategy', 'Tool', 'ToolInvocation'],
    relationships: ['HAS_STRATEGY', 'INVOKED', 'USED_TOOL', 'USES_TOOL', 'SUCCEEDED_IN', 'FAILED_IN'],
    tables: ['tool_invocations'],
    // Recall's metadata filter matches the turns of the conversations a strategy came from.
    reads: ['User', 'Conversation', 'HAS_CONVERSATION', 'Turn', 'HAS_TURN'],
  },
  goals: {
    files: ['src/goals/'],
    labels: ['Goal'],
    relationships: ['HAS_GOAL', 'SUBGOAL_OF', 'BLOCKED_BY'],
    tables: [],
    reads: ['User'],
  },
  pools: {
    files: ['src/pools/'],
    labels: ['MemoryPool', 'PoolEntry', 'PoolEntryVersion', 'PoolSnapshot', 'PoolSnapshotEntry'],
    relationships: ['HAS_VERSION', 'PREVIOUS_VERSION'],
    tables: [],
    // Entries written from a user's conversations are that user's by provenance (delete, forget-user).
    reads: ['Conversation'],
  },
  observations: {
    files: ['src/observations/'],
    labels: [],
    relationships: [],
    // connection_learned_info: per-connection learned info, a schema-free document like the profile.
    tables: ['observations', 'user_profiles', 'connection_learned_info'],
  },
  'short-term': {
    files: ['src/short-term/'],
    labels: [],
    relationships: [],
    tables: ['short_term_entries'],
  },
  settings: {
    files: ['src/settings/'],
    labels: [],
    relationships: [],
    tables: ['user_memory_settings'],
  },
  audit: {
    files: ['src/audit/'],
    labels: [],
    relationships: [],
    tables: [
      'memory_audit_log',
      'ensure_audit_partitions',
      'drop_old_audit_partitions',
      'audit_chain_heads',
      'audit_chain_genesis',
      'audit_chain_link_hash',
      'audit_chain_seal',
      'audit_content_digest',
      'audit_events',
      'audit_recalls',
      'audit_erasures',
    ],
  },
  worker: {
    files: ['src/worker/pg-job-store.ts'],
    labels: [],
    relationships: [],
    tables: ['worker_job_runs', 'consolidation_ledger'],
  },
  tenancy: {
    files: ['src/tenancy/'],
    labels: [],
    relationships: [],
    tables: ['tenants', 'api_keys', 'tenant_users', 'user_erasures'],
    // The whole-user graph part finds the user's anchor node.
    reads: ['User'],
    generic: "whole-user export, import and erasure cover every label and user_id table from the catalog (the graph by element id, each store's tables by name)",
  },
  llm: {
    files: ['src/llm/'],
    labels: [],
    relationships: [],
    tables: ['llm_usage'],
  },
  // Not an owner of data: the access-count write (src/retrieval/reinforcement.ts) as a template
  // that each store owning a recalled label runs for its own label only.
  'access-count template': {
    files: ['src/infra/access-count.ts'],
    labels: [],
    relationships: [],
    tables: [],
    generic: 'the label is the calling store’s own (addAccessCountsCypher(label) in each owner)',
  },
  // Not an owner of data either: the reads and the search statement of embeddings held in
  // memory (src/infra/owner-vectors.ts), templates each store runs for its own label only.
  'held-vectors template': {
    files: ['src/infra/owner-vectors.ts'],
    labels: [],
    relationships: [],
    tables: [],
    generic: 'the label is the calling store’s own (heldReadCypher(label), heldSearchCypher(label) in each owner)',
  },
  migrate: {
    files: ['src/migrate/'],
    labels: ['SchemaMigration', 'EmbeddingModel'],
    relationships: [],
    tables: ['schema_version'],
    schema: true,
    generic: 'schema work: backfills and re-embedding per label, counts from the catalog',
  },
};
