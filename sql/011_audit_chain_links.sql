-- 011_audit_chain_links: the days of the audit chain (sql/007) linked to each other, so that
-- removing a whole day (its rows and its head), cutting rows off the end of a day, or moving
-- a head back with one UPDATE is found by `mnemograph audit verify` without an outside anchor.
--
-- Each head in `audit_chain_heads` gains:
-- - its place in the chain of heads (`link_no`, 1, 2, ... in the order days were opened) and
--   the head opened just before it (`prev_day`) with that head's position and hash when this
--   day was opened (`prev_seq`, `prev_hash`): a committed point on the previous day's chain;
-- - `link` = audit_chain_link_hash(day, prev_day, prev_seq, prev_hash). A day opened after
--   this migration (`version` 2) starts its chain at `link`, so its rows' hashes depend on
--   the day before: relinking it means rewriting every one of its rows;
-- - `seal` = audit_chain_seal(link, seq, last_hash), moved with the head by every insert: a
--   head moved back (seq, last_hash) or relinked no longer matches its seal.
-- Days opened before this migration (`version` 1) keep their genesis (their rows were hashed
-- on it) and are linked here in day order, each to the previous day's final head.
-- Days are opened in one order (advisory transaction lock), so two days never link to the
-- same head. Retention (drop_old_audit_partitions, now with the actor as JSONB) writes one
-- chained `audit_retention` row naming the last day it dropped (`droppedThrough`): a missing
-- partition of a later day is a break. Heads of dropped days stay, as the link's record.
-- Parameters: none. Runs inside the migration transaction.

ALTER TABLE audit_chain_heads
    ADD COLUMN link_no BIGINT,
    ADD COLUMN prev_day DATE,
    ADD COLUMN prev_seq BIGINT,
    ADD COLUMN prev_hash BYTEA,
    ADD COLUMN link BYTEA,
    ADD COLUMN seal BYTEA,
    ADD COLUMN version SMALLINT;

-- The hash that names a day's place in the chain of days: sha256 of the UTF-8 text
-- 'mnemograph audit link v2|YYYY-MM-DD|<previous day or ->|<its position or ->|', then the
-- previous day's hash at that position (none for the first day).
CREATE FUNCTION audit_chain_link_hash(day DATE, prev_day DATE, prev_seq BIGINT, prev_hash BYTEA) RETURNS BYTEA
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(convert_to('mnemograph audit link v2|' || to_char(day, 'YYYY-MM-DD') || '|' || coalesce(to_char(prev_day, 'YYYY-MM-DD'), '-')
        || '|' || coalesce(prev_seq::text, '-') || '|', 'UTF8') || coalesce(prev_hash, ''::bytea))
$$;

-- The seal of a head: sha256(link || seq as 8 bytes big-endian || last_hash).
CREATE FUNCTION audit_chain_seal(link BYTEA, seq BIGINT, last_hash BYTEA) RETURNS BYTEA
LANGUAGE sql IMMUTABLE AS $$
    SELECT sha256(link || int8send(seq) || last_hash)
$$;

-- Link the days already chained, in day order, each to the previous day's final head.
WITH ordered AS (
    SELECT day, row_number() OVER (ORDER BY day) AS n,
        lag(day) OVER (ORDER BY day) AS p_day, lag(seq) OVER (ORDER BY day) AS p_seq, lag(last_hash) OVER (ORDER BY day) AS p_hash
    FROM audit_chain_heads
)
UPDATE audit_chain_heads h
SET link_no = o.n, prev_day = o.p_day, prev_seq = o.p_seq, prev_hash = o.p_hash,
    link = audit_chain_link_hash(h.day, o.p_day, o.p_seq, o.p_hash), version = 1
FROM ordered o WHERE o.day = h.day;
UPDATE audit_chain_heads SET seal = audit_chain_seal(link, seq, last_hash);

ALTER TABLE audit_chain_heads
    ALTER COLUMN link_no SET NOT NULL,
    ALTER COLUMN link SET NOT NULL,
    ALTER COLUMN seal SET NOT NULL,
    ALTER COLUMN version SET NOT NULL,
    ADD CONSTRAINT audit_chain_heads_link_no_key UNIQUE (link_no),
    ADD CONSTRAINT audit_chain_heads_prev_day_key UNIQUE (prev_day);

-- Opens day d's chain: under one advisory lock (days open one at a time), links it to the
-- head opened last, at that head's committed position. Returns the day's head, locked.
CREATE FUNCTION audit_chain_open_day(d DATE) RETURNS audit_chain_heads
LANGUAGE plpgsql AS $$
DECLARE
    prev audit_chain_heads%ROWTYPE;
    head audit_chain_heads%ROWTYPE;
    lnk BYTEA;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('mnemograph audit chain: open a day'));
    SELECT * INTO head FROM audit_chain_heads WHERE day = d FOR UPDATE;
    IF FOUND THEN
        RETURN head; -- another writer opened it while we waited
    END IF;
    SELECT * INTO prev FROM audit_chain_heads ORDER BY link_no DESC LIMIT 1;
    lnk := audit_chain_link_hash(d, prev.day, prev.seq, prev.last_hash);
    INSERT INTO audit_chain_heads (day, seq, last_hash, last_id, link_no, prev_day, prev_seq, prev_hash, link, seal, version)
        VALUES (d, 0, lnk, NULL, coalesce(prev.link_no, 0) + 1, prev.day, prev.seq, prev.last_hash, lnk, audit_chain_seal(lnk, 0, lnk), 2)
        RETURNING * INTO head;
    RETURN head;
END;
$$;

-- Links NEW to its day's chain under the day's head lock, and moves the head and its seal.
CREATE OR REPLACE FUNCTION audit_chain_link() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d DATE := (NEW.timestamp AT TIME ZONE 'UTC')::date;
    head audit_chain_heads%ROWTYPE;
BEGIN
    SELECT * INTO head FROM audit_chain_heads WHERE day = d FOR UPDATE;
    IF NOT FOUND THEN
        head := audit_chain_open_day(d);
    END IF;
    NEW.redacted_at := NULL;
    NEW.content_hash := audit_content_digest(to_jsonb(NEW));
    NEW.chain_seq := head.seq + 1;
    NEW.row_hash := sha256(head.last_hash || NEW.content_hash);
    UPDATE audit_chain_heads SET seq = NEW.chain_seq, last_hash = NEW.row_hash, last_id = NEW.id, seal = audit_chain_seal(head.link, NEW.chain_seq, NEW.row_hash)
        WHERE day = d;
    RETURN NEW;
END;
$$;

-- Retention, recorded: drops the daily partitions whose whole day is older than
-- `retention_days` (UTC) and, when it dropped any, writes one chained `audit_retention` row
-- (memory_type 'system') whose metadata names the last day dropped (`droppedThrough`), the
-- partitions and the retention; `actor` fills the actor columns (keys as the column names).
-- Returns the names dropped.
DROP FUNCTION drop_old_audit_partitions(INTEGER);
CREATE FUNCTION drop_old_audit_partitions(retention_days INTEGER, actor JSONB DEFAULT '{}') RETURNS SETOF TEXT
LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
    cutoff DATE := (now() AT TIME ZONE 'UTC')::date - retention_days;
    dropped TEXT[] := '{}';
BEGIN
    FOR r IN
        SELECT c.relname FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = 'memory_audit_log' AND c.relname ~ '^memory_audit_log_p[0-9]{8}$'
        ORDER BY c.relname
    LOOP
        IF substring(r.relname FROM 19) < to_char(cutoff, 'YYYYMMDD') THEN
            EXECUTE format('DROP TABLE %I', r.relname);
            dropped := dropped || r.relname::text;
            RETURN NEXT r.relname;
        END IF;
    END LOOP;
    IF cardinality(dropped) > 0 THEN
        INSERT INTO memory_audit_log (operation, memory_type, success, metadata, tenant_id, key_id, agent_id, surface, request_id, job_name, job_run_id)
        VALUES ('audit_retention', 'system', TRUE,
            jsonb_build_object('droppedThrough', to_char(cutoff - 1, 'YYYY-MM-DD'), 'partitions', to_jsonb(dropped), 'retentionDays', retention_days),
            actor ->> 'tenant_id', actor ->> 'key_id', actor ->> 'agent_id', actor ->> 'surface', actor ->> 'request_id', actor ->> 'job_name', (actor ->> 'job_run_id')::bigint);
    END IF;
END;
$$;

-- Partitions dropped before this migration: one retention record covers the newest such day,
-- so the proof of the days kept starts here (as sql/007's did for the rows before it).
DO $$
DECLARE
    through DATE;
BEGIN
    SELECT max(day) INTO through FROM audit_chain_heads WHERE to_regclass('memory_audit_log_p' || to_char(day, 'YYYYMMDD')) IS NULL;
    IF through IS NOT NULL THEN
        PERFORM ensure_audit_partitions((now() AT TIME ZONE 'UTC')::date, 1);
        INSERT INTO memory_audit_log (operation, memory_type, success, metadata)
        VALUES ('audit_retention', 'system', TRUE, jsonb_build_object('droppedThrough', to_char(through, 'YYYY-MM-DD'), 'partitions', '[]'::jsonb, 'note', 'dropped before sql/011'));
    END IF;
END;
$$;
