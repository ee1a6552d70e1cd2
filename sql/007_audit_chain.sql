-- 007_audit_chain: tamper evidence for memory_audit_log, and erasure that keeps the proof.
-- Each row gets `content_hash` (sha256 of its canonical content, audit_content_digest) and
-- `row_hash` = sha256(previous row_hash of the same UTC day || content_hash), its place in
-- the day's chain (`chain_seq`, 1, 2, ...) and `redacted_at` (set when forget-user blanks
-- the row's personal columns; the hashes stay, so the chain still verifies).
-- `audit_chain_heads` holds, per UTC day, the last link (seq, hash, id): the row locked FOR
-- UPDATE by every insert of that day, so concurrent writers (server, worker, CLI) extend
-- one chain and never fork it; `mnemograph audit verify` also checks each day's last row
-- against it (rows deleted from the end of a day).
-- The link is set by the BEFORE INSERT trigger `audit_zz_chain_link`: BEFORE triggers fire
-- in name order, so it runs after `audit_drop_erased` (sql/005) and a dropped row never
-- advances the chain. Rows already present are chained here, per day in id order.
-- Parameters: none. Runs inside the migration transaction.

ALTER TABLE memory_audit_log
    ADD COLUMN chain_seq BIGINT,
    ADD COLUMN content_hash BYTEA,
    ADD COLUMN row_hash BYTEA,
    ADD COLUMN redacted_at TIMESTAMPTZ;
CREATE INDEX idx_audit_chain_seq ON memory_audit_log (chain_seq);
CREATE INDEX idx_audit_redacted ON memory_audit_log (redacted_at) WHERE redacted_at IS NOT NULL;

CREATE TABLE audit_chain_heads (
    day DATE PRIMARY KEY,
    seq BIGINT NOT NULL,
    last_hash BYTEA NOT NULL,
    last_id BIGINT
);

-- The hash a day's first row links to: sha256 of 'mnemograph audit chain YYYY-MM-DD'.
CREATE FUNCTION audit_chain_genesis(day DATE) RETURNS BYTEA
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(convert_to('mnemograph audit chain ' || to_char(day, 'YYYY-MM-DD'), 'UTF8'))
$$;

-- The canonical content digest of one row, given as to_jsonb(row): sha256 of the UTF-8 text
-- of a JSON array of every content column (the actor included) in a fixed order, with the
-- timestamp as integer microseconds since the epoch (to_jsonb renders it in the session's
-- time zone). jsonb's text form is deterministic for a value, so the same row always gives
-- the same bytes. Used by the insert trigger and by verification: the canonical form exists
-- once. Not included: chain_seq, content_hash, row_hash, redacted_at (the chain's own columns).
CREATE FUNCTION audit_content_digest(r JSONB) RETURNS BYTEA
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(convert_to(jsonb_build_array(
        'v1',
        r -> 'id',
        (extract(epoch FROM (r ->> 'timestamp')::timestamptz) * 1000000)::bigint,
        r -> 'operation', r -> 'memory_type', r -> 'user_id', r -> 'session_id', r -> 'conversation_id',
        r -> 'source_channel', r -> 'target_channels', r -> 'affected_ids', r -> 'query_text',
        r -> 'result_count', r -> 'latency_ms', r -> 'success', r -> 'error_message',
        r -> 'promoted_from_channel', r -> 'promotion_confidence', r -> 'promotion_access_count',
        r -> 'promotion_conversation_count', r -> 'config_snapshot', r -> 'metadata',
        r -> 'tenant_id', r -> 'key_id', r -> 'agent_id', r -> 'surface', r -> 'request_id',
        r -> 'job_name', r -> 'job_run_id'
    )::text, 'UTF8'))
$$;

-- Links NEW to its day's chain under the day's head lock (created on the day's first row).
CREATE FUNCTION audit_chain_link() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d DATE := (NEW.timestamp AT TIME ZONE 'UTC')::date;
    head audit_chain_heads%ROWTYPE;
BEGIN
    SELECT * INTO head FROM audit_chain_heads WHERE day = d FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (day, seq, last_hash) VALUES (d, 0, audit_chain_genesis(d)) ON CONFLICT (day) DO NOTHING;
        SELECT * INTO head FROM audit_chain_heads WHERE day = d FOR UPDATE;
    END IF;
    NEW.redacted_at := NULL;
    NEW.content_hash := audit_content_digest(to_jsonb(NEW));
    NEW.chain_seq := head.seq + 1;
    NEW.row_hash := sha256(head.last_hash || NEW.content_hash);
    UPDATE audit_chain_heads SET seq = NEW.chain_seq, last_hash = NEW.row_hash, last_id = NEW.id WHERE day = d;
    RETURN NEW;
END;
$$;

-- Chain the rows written before this migration, per day in id order.
DO $$
DECLARE
    r RECORD;
    d DATE;
    prev BYTEA;
    seq BIGINT;
    content BYTEA;
BEGIN
    FOR r IN SELECT l.id, l.timestamp, (l.timestamp AT TIME ZONE 'UTC')::date AS day, to_jsonb(l) AS doc
             FROM memory_audit_log l ORDER BY 3, l.id LOOP
        IF d IS DISTINCT FROM r.day THEN
            IF d IS NOT NULL THEN
                INSERT INTO audit_chain_heads (day, seq, last_hash) VALUES (d, seq, prev);
            END IF;
            d := r.day;
            prev := audit_chain_genesis(d);
            seq := 0;
        END IF;
        content := audit_content_digest(r.doc);
        seq := seq + 1;
        prev := sha256(prev || content);
        UPDATE memory_audit_log SET chain_seq = seq, content_hash = content, row_hash = prev WHERE id = r.id AND timestamp = r.timestamp;
    END LOOP;
    IF d IS NOT NULL THEN
        INSERT INTO audit_chain_heads (day, seq, last_hash) VALUES (d, seq, prev);
    END IF;
    UPDATE audit_chain_heads h SET last_id = l.id FROM memory_audit_log l
        WHERE l.timestamp >= (h.day::timestamp AT TIME ZONE 'UTC') AND l.timestamp < ((h.day + 1)::timestamp AT TIME ZONE 'UTC') AND l.chain_seq = h.seq;
END;
$$;

CREATE TRIGGER audit_zz_chain_link BEFORE INSERT ON memory_audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_chain_link();
