-- 005_erasure_guard: `forget-user` deletes a user's audit rows, but rows about that user
-- can still arrive afterwards: queued in another process's audit logger, or spooled to disk
-- while PostgreSQL was down and replayed later. `user_erasures` records when each user was
-- erased, and a trigger drops any audit row about them timestamped at or before that
-- moment (the erasure's own `forget_user` record is kept). Activity after the erasure
-- (a returning user) is logged as usual.
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE user_erasures (
    user_id VARCHAR(128) PRIMARY KEY,
    erased_at TIMESTAMPTZ NOT NULL
);

CREATE FUNCTION drop_erased_audit_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.user_id IS NOT NULL AND NEW.operation <> 'forget_user' AND EXISTS (
        SELECT 1 FROM user_erasures e WHERE e.user_id = NEW.user_id AND NEW.timestamp <= e.erased_at
    ) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER audit_drop_erased BEFORE INSERT ON memory_audit_log
    FOR EACH ROW EXECUTE FUNCTION drop_erased_audit_rows();
