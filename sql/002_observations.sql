-- 002_observations: the durable observation queue (seed 000's ContextEvent event bus) and the
-- schema-free per-user profile. recordObservation inserts a row with processed_at NULL; the
-- consolidate job claims pending rows with FOR UPDATE SKIP LOCKED, applies them, and sets
-- processed_at in the same transaction, so each row is applied once; a failed run rolls
-- back, bumps `attempts` / `last_error`, and the row stays queued.
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE observations (
    id TEXT PRIMARY KEY,
    user_id VARCHAR(128) NOT NULL,
    channel VARCHAR(100) NOT NULL DEFAULT '_global',
    category VARCHAR(30) NOT NULL CHECK (category IN ('fact', 'preference', 'project_details', 'correction')),
    content TEXT NOT NULL,
    source_metadata JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    processed_at TIMESTAMPTZ,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_attempt_at TIMESTAMPTZ,
    last_error TEXT
);
CREATE INDEX idx_observations_pending ON observations (user_id, created_at) WHERE processed_at IS NULL;
CREATE INDEX idx_observations_user ON observations (user_id, created_at);

-- The information scaffold: keys invented per user (works_at, likes, project_details...).
-- `narrative` (001) holds the short working narrative rewritten on each consolidation.
ALTER TABLE user_profiles ADD COLUMN profile JSONB NOT NULL DEFAULT '{}';
ALTER TABLE user_profiles ADD COLUMN narrative_updated_at TIMESTAMPTZ;
