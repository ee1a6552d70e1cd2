-- 010_tiers: the short-term tier, per-connection learned info and per-user memory settings.
-- short_term_entries (seed 001 AgentShortTermMemory): typed entries of one agent session
--   (tenant, agent or NULL for admin keys, user, session), a JSON value, a TTL and its
--   expiry, access counts; durable (PostgreSQL, not Redis). One entry per (tenant, agent,
--   user, session, key): an entry belongs to the agent that wrote it (NULL: an admin key),
--   and only that agent (or an admin key of the tenant) sees it. Consolidation promotes entries read often enough to a fact
--   (promoted_fact_id) and deletes expired ones.
-- connection_learned_info (seed 000 §2.1/§3.E persistent_learned_info): one JSON document
--   per user and tool connection ("default Jira project for this connection is PROJ").
-- user_memory_settings (seed 002 Settings → Memory): memory on/off, default topK, rerank,
--   automatic mining, and per-agent overrides ({"<agent>": {"recall": false}}).
-- observations gain the connection they were learned on (facts made from them carry it).
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE short_term_entries (
    id UUID PRIMARY KEY,
    tenant_id VARCHAR(32),
    agent_id VARCHAR(64),
    user_id VARCHAR(128) NOT NULL,
    channel VARCHAR(100) NOT NULL DEFAULT '_global',
    session_id VARCHAR(200) NOT NULL,
    memory_key VARCHAR(200) NOT NULL,
    memory_type VARCHAR(20) NOT NULL CHECK (memory_type IN ('task_context', 'conversation', 'tool_result', 'reflection', 'observation')),
    memory_value JSONB NOT NULL,
    ttl_seconds INTEGER NOT NULL CHECK (ttl_seconds > 0),
    expires_at TIMESTAMPTZ NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    promoted_at TIMESTAMPTZ,
    promoted_fact_id TEXT
);
CREATE UNIQUE INDEX idx_short_term_key ON short_term_entries (user_id, session_id, memory_key, tenant_id, agent_id) NULLS NOT DISTINCT;
CREATE INDEX idx_short_term_expiry ON short_term_entries (expires_at);
CREATE INDEX idx_short_term_promotable ON short_term_entries (access_count) WHERE promoted_at IS NULL;

CREATE TABLE connection_learned_info (
    user_id VARCHAR(128) NOT NULL,
    connection_id VARCHAR(200) NOT NULL,
    info JSONB NOT NULL DEFAULT '{}',
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    PRIMARY KEY (user_id, connection_id)
);

CREATE TABLE user_memory_settings (
    user_id VARCHAR(128) PRIMARY KEY,
    memory_enabled BOOLEAN NOT NULL DEFAULT TRUE,
    default_top_k INTEGER CHECK (default_top_k BETWEEN 1 AND 200),
    rerank BOOLEAN,
    auto_mine BOOLEAN NOT NULL DEFAULT TRUE,
    agent_overrides JSONB NOT NULL DEFAULT '{}',
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

ALTER TABLE observations ADD COLUMN connection_id VARCHAR(200);
