-- 001_initial: the Postgres tables of seed 003 and the daily-partitioned audit log.
-- Vectors live in Neo4j (pgvector is not assumed), so the spec's embedding columns and
-- ivfflat indexes are left out. Ids are TEXT so callers may use UUIDs or their own ids.
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE conversation_logs (
    id BIGSERIAL PRIMARY KEY,
    turn_id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL,
    user_id VARCHAR(128) NOT NULL,
    turn_index INTEGER NOT NULL,
    timestamp TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    role VARCHAR(20) NOT NULL,
    content TEXT NOT NULL,
    content_hash VARCHAR(64) NOT NULL,
    token_count INTEGER,
    model VARCHAR(100),
    channel VARCHAR(100) NOT NULL DEFAULT '_global',
    metadata JSONB NOT NULL DEFAULT '{}',
    UNIQUE (conversation_id, turn_index)
);
CREATE INDEX idx_logs_timestamp ON conversation_logs USING BRIN (timestamp);
CREATE INDEX idx_logs_conversation ON conversation_logs (conversation_id);
CREATE INDEX idx_logs_channel ON conversation_logs (channel);
CREATE INDEX idx_logs_user ON conversation_logs (user_id, timestamp);

CREATE TABLE memory_timeline (
    id BIGSERIAL PRIMARY KEY,
    user_id VARCHAR(128) NOT NULL,
    memory_type VARCHAR(50) NOT NULL,
    neo4j_node_id VARCHAR(160),
    event_time TIMESTAMPTZ NOT NULL,
    summary TEXT,
    importance_score FLOAT DEFAULT 0.5,
    access_count INTEGER DEFAULT 0,
    last_accessed TIMESTAMPTZ,
    channel VARCHAR(100) NOT NULL DEFAULT '_global',
    archived BOOLEAN DEFAULT FALSE,
    metadata JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_timeline_time ON memory_timeline USING BRIN (event_time);
CREATE INDEX idx_timeline_type ON memory_timeline (memory_type);
CREATE INDEX idx_timeline_importance ON memory_timeline (importance_score DESC);
CREATE INDEX idx_timeline_channel ON memory_timeline (channel);
CREATE INDEX idx_timeline_user ON memory_timeline (user_id, event_time);

CREATE TABLE tool_invocations (
    id BIGSERIAL PRIMARY KEY,
    invocation_id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL,
    user_id VARCHAR(128) NOT NULL,
    turn_index INTEGER NOT NULL,
    timestamp TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    tool_name VARCHAR(100) NOT NULL,
    tool_input JSONB NOT NULL,
    tool_output JSONB,
    success BOOLEAN,
    latency_ms INTEGER,
    error_message TEXT,
    channel VARCHAR(100) NOT NULL DEFAULT '_global'
);
CREATE INDEX idx_tools_conversation ON tool_invocations (conversation_id);
CREATE INDEX idx_tools_name ON tool_invocations (tool_name);
CREATE INDEX idx_tools_timestamp ON tool_invocations USING BRIN (timestamp);
CREATE INDEX idx_tools_channel ON tool_invocations (channel);
CREATE INDEX idx_tools_user ON tool_invocations (user_id, timestamp);

CREATE TABLE user_profiles (
    user_id VARCHAR(128) PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    preferences JSONB NOT NULL DEFAULT '{}',
    expertise_areas JSONB NOT NULL DEFAULT '[]',
    communication_style JSONB NOT NULL DEFAULT '{}',
    narrative TEXT,
    metadata JSONB NOT NULL DEFAULT '{}'
);

CREATE TABLE memory_audit_log (
    id BIGSERIAL,
    timestamp TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    operation VARCHAR(50) NOT NULL,
    memory_type VARCHAR(50) NOT NULL,
    user_id VARCHAR(128),
    session_id VARCHAR(128),
    conversation_id TEXT,
    source_channel VARCHAR(100),
    target_channels TEXT[],
    affected_ids TEXT[],
    query_text TEXT,
    result_count INTEGER,
    latency_ms INTEGER,
    success BOOLEAN NOT NULL DEFAULT TRUE,
    error_message TEXT,
    promoted_from_channel VARCHAR(100),
    promotion_confidence FLOAT,
    promotion_access_count INTEGER,
    promotion_conversation_count INTEGER,
    config_snapshot JSONB NOT NULL DEFAULT '{}',
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (id, timestamp)
) PARTITION BY RANGE (timestamp);
CREATE INDEX idx_audit_user ON memory_audit_log (user_id, timestamp);
CREATE INDEX idx_audit_session ON memory_audit_log (session_id, timestamp);
CREATE INDEX idx_audit_operation ON memory_audit_log (operation, timestamp);
CREATE INDEX idx_audit_memory_type ON memory_audit_log (memory_type, timestamp);
CREATE INDEX idx_audit_source_channel ON memory_audit_log (source_channel, timestamp);

-- Creates the daily partitions memory_audit_log_pYYYYMMDD (UTC days) from `from_day` for
-- `days` days. Idempotent. Returns how many partitions it created.
CREATE FUNCTION ensure_audit_partitions(from_day DATE, days INTEGER) RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
    d DATE;
    created INTEGER := 0;
    part TEXT;
BEGIN
    FOR i IN 0 .. days - 1 LOOP
        d := from_day + i;
        part := 'memory_audit_log_p' || to_char(d, 'YYYYMMDD');
        IF to_regclass(part) IS NULL THEN
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF memory_audit_log FOR VALUES FROM (%L) TO (%L)',
                part, (d::timestamp AT TIME ZONE 'UTC'), ((d + 1)::timestamp AT TIME ZONE 'UTC'));
            created := created + 1;
        END IF;
    END LOOP;
    RETURN created;
END;
$$;

-- Drops daily partitions whose whole day is older than `retention_days` (UTC). Returns the
-- names dropped.
CREATE FUNCTION drop_old_audit_partitions(retention_days INTEGER) RETURNS SETOF TEXT
LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
    cutoff TEXT := to_char((now() AT TIME ZONE 'UTC')::date - retention_days, 'YYYYMMDD');
BEGIN
    FOR r IN
        SELECT c.relname FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = 'memory_audit_log' AND c.relname ~ '^memory_audit_log_p[0-9]{8}$'
    LOOP
        IF substring(r.relname FROM 19) < cutoff THEN
            EXECUTE format('DROP TABLE %I', r.relname);
            RETURN NEXT r.relname;
        END IF;
    END LOOP;
END;
$$;

SELECT ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date - 1, {{AUDIT_PARTITION_DAYS_AHEAD}} + 2);
