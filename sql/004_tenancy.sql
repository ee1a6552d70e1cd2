-- 004_tenancy: tenants, their API keys (only a SHA-256 hash of each key is stored) and the
-- user ids each tenant owns. The API namespaces a tenant's user ids as "<tenant>.<user>"
-- in every store, so `tenant_users` is the registry that says which ids a tenant has used
-- (reads of an unknown user answer 404) and what `forget-user` must erase.
-- Parameters: none. Runs inside the migration transaction.

CREATE TABLE tenants (
    id VARCHAR(32) PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE TABLE api_keys (
    id VARCHAR(32) PRIMARY KEY,
    tenant_id VARCHAR(32) NOT NULL REFERENCES tenants (id),
    key_hash CHAR(64) NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    revoked_at TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX idx_api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE tenant_users (
    tenant_id VARCHAR(32) NOT NULL REFERENCES tenants (id),
    user_id VARCHAR(128) NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    PRIMARY KEY (tenant_id, user_id)
);
