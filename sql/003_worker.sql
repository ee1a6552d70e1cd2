-- 003_worker: what the background worker needs to be safe to interrupt and to account for.
--   consolidation_ledger: one row per knowledge item a consolidation applied (key derived from
--     user, source and item), so a rerun after a crash skips what was already written.
--   llm_usage: tokens and cost of every LLM call (extraction), ok or rejected.
--   worker_job_runs: one row per job run (who, when, outcome, counters).
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE consolidation_ledger (
    item_key TEXT PRIMARY KEY,
    user_id VARCHAR(128) NOT NULL,
    source_id TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_ledger_applied ON consolidation_ledger (applied_at);
CREATE INDEX idx_ledger_source ON consolidation_ledger (source_id);

CREATE TABLE llm_usage (
    id BIGSERIAL PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    user_id VARCHAR(128) NOT NULL,
    conversation_id TEXT,
    purpose VARCHAR(50) NOT NULL,
    provider VARCHAR(40) NOT NULL,
    model VARCHAR(100) NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd NUMERIC(12, 6) NOT NULL,
    latency_ms INTEGER NOT NULL,
    ok BOOLEAN NOT NULL,
    error TEXT
);
CREATE INDEX idx_llm_usage_time ON llm_usage USING BRIN (created_at);
CREATE INDEX idx_llm_usage_user ON llm_usage (user_id, created_at);

CREATE TABLE worker_job_runs (
    id BIGSERIAL PRIMARY KEY,
    job VARCHAR(40) NOT NULL,
    worker_id TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    status VARCHAR(20) NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
    stats JSONB NOT NULL DEFAULT '{}',
    error TEXT
);
CREATE INDEX idx_job_runs_job ON worker_job_runs (job, started_at);
