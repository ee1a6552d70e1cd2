-- 006_key_roles: what an API key may do, and who acts with it.
-- `role`: admin (every memory route of its tenant: the keys issued before this migration),
-- agent (bound to `agent_id`, an agent of its tenant: it acts as that agent), reviewer (the
-- audit log and statistics of its tenant, never memory content; writes nothing).
-- The audit log gains the actor of each row: tenant, key id (never the key), agent, the
-- surface the request came through (http, mcp, cli, worker), the request id and, for the
-- worker, the job and its run.
-- Parameters: none. Runs inside the migration transaction.

ALTER TABLE api_keys
    ADD COLUMN role VARCHAR(16) NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'agent', 'reviewer')),
    ADD COLUMN agent_id VARCHAR(64),
    ADD CONSTRAINT api_keys_agent_binding CHECK ((role = 'agent') = (agent_id IS NOT NULL));

ALTER TABLE memory_audit_log
    ADD COLUMN tenant_id VARCHAR(32),
    ADD COLUMN key_id VARCHAR(32),
    ADD COLUMN agent_id VARCHAR(64),
    ADD COLUMN surface VARCHAR(16),
    ADD COLUMN request_id VARCHAR(100),
    ADD COLUMN job_name VARCHAR(64),
    ADD COLUMN job_run_id BIGINT;
CREATE INDEX idx_audit_tenant_time ON memory_audit_log (tenant_id, timestamp DESC);
