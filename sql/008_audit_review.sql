-- 008_audit_review: the read side of the audit log for compliance reviewers.
-- Indexes for GET /v1/audit's filters (keyset pagination on (timestamp, id) within a
-- tenant: the tenant's key, agent, failures, and the channels a read searched), three
-- views with readable columns (audit_events, audit_recalls, audit_erasures; see
-- docs/COMPLIANCE.md) and the role mnemograph_reviewer, which may read those views and
-- nothing else. The role is cluster-wide: it is created only when missing (NOLOGIN; the
-- operator grants LOGIN and a password), so migrating a second database on the same
-- server, or a database whose role an operator made beforehand, works. A migrating user
-- without CREATEROLE gets a warning instead of an error, and the grants wait until the role
-- exists (create it, then grant as docs/COMPLIANCE.md shows).
-- Parameters: none. Runs inside the migration transaction.

-- Keyset pages of one tenant newest first; and the actor filters of a tenant.
CREATE INDEX idx_audit_tenant_key ON memory_audit_log (tenant_id, key_id, timestamp DESC, id DESC);
CREATE INDEX idx_audit_tenant_agent ON memory_audit_log (tenant_id, agent_id, timestamp DESC, id DESC);
-- A tenant's failures (a small share of rows): found without scanning its successes.
CREATE INDEX idx_audit_tenant_failed ON memory_audit_log (tenant_id, timestamp DESC, id DESC) WHERE NOT success;
-- "Which rows touched channel C": a read lists the channels it searched.
CREATE INDEX idx_audit_target_channels ON memory_audit_log USING GIN (target_channels);

-- Every audit row, with readable names and the user and conversation ids as the tenant
-- knows them (internal ids are "<tenant>.<id>"; internal_user_id keeps the stored one).
CREATE VIEW audit_events AS
SELECT
    a.id AS event_id,
    a.timestamp AS occurred_at,
    a.tenant_id,
    a.key_id AS api_key_id,
    a.agent_id,
    a.surface,
    a.request_id,
    a.job_name,
    a.job_run_id,
    a.operation,
    a.memory_type,
    CASE WHEN a.tenant_id IS NOT NULL AND left(a.user_id, length(a.tenant_id) + 1) = a.tenant_id || '.' THEN substr(a.user_id, length(a.tenant_id) + 2) ELSE a.user_id END AS user_id,
    a.user_id AS internal_user_id,
    a.session_id,
    CASE WHEN a.tenant_id IS NOT NULL AND left(a.conversation_id, length(a.tenant_id) + 1) = a.tenant_id || '.' THEN substr(a.conversation_id, length(a.tenant_id) + 2) ELSE a.conversation_id END AS conversation_id,
    a.source_channel AS channel,
    a.target_channels AS channels,
    a.affected_ids,
    a.query_text,
    a.result_count,
    a.latency_ms,
    a.success,
    a.error_message,
    a.promoted_from_channel,
    a.promotion_confidence,
    a.metadata,
    a.config_snapshot
FROM memory_audit_log a;
COMMENT ON VIEW audit_events IS 'Every audit row (memory_audit_log) with readable columns: who (tenant, API key id, agent, surface, request, worker job and run), what (operation, memory type, affected ids), about whom (user id as the tenant knows it), when (occurred_at, UTC).';

-- Reads (recall, searches, graph reads): what reached which agent, at audit level reads or verbose.
CREATE VIEW audit_recalls AS
SELECT event_id, occurred_at, tenant_id, api_key_id, agent_id, surface, request_id, operation, memory_type,
    user_id, internal_user_id, channel, channels AS channels_searched, query_text, result_count,
    affected_ids AS returned_ids, latency_ms, success
FROM audit_events
WHERE query_text IS NOT NULL;
COMMENT ON VIEW audit_recalls IS 'Read operations (rows with a query): which agent and key read what about which user, the channels searched, and the ids of the items returned (returned_ids). Recorded at AUDIT_LEVEL reads or verbose.';

-- The record each forget-user leaves (the user's other rows are gone).
CREATE VIEW audit_erasures AS
SELECT event_id, occurred_at, tenant_id, api_key_id, agent_id, surface, request_id,
    user_id, internal_user_id, metadata AS report
FROM audit_events
WHERE operation = 'forget_user';
COMMENT ON VIEW audit_erasures IS 'One row per forget-user: who erased which user and when, with the erasure report (what was removed from each store).';

-- The reviewer role: created when missing, never altered when present (an operator may
-- have given it LOGIN and a password). Two databases migrating at once may race to create
-- it; the loser sees the winner's role.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mnemograph_reviewer') THEN
        BEGIN
            CREATE ROLE mnemograph_reviewer NOLOGIN;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN
                RAISE WARNING 'mnemograph_reviewer was not created (the migrating user lacks CREATEROLE); create it and grant it the audit views as docs/COMPLIANCE.md shows';
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mnemograph_reviewer') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO mnemograph_reviewer', current_database());
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO mnemograph_reviewer', current_schema());
        GRANT SELECT ON audit_events, audit_recalls, audit_erasures TO mnemograph_reviewer;
    END IF;
END;
$$;
