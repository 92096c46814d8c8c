-- Schema version 1 exactly as printjob shipped it for postgresql, before the schema was
-- written once (printjob_adapters.sql.schema). Never edit: databases made by it exist.

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL,
    credits_balance BIGINT NOT NULL,
    credits_held BIGINT NOT NULL CHECK (credits_held >= 0),
    active_jobs_max INTEGER NOT NULL CHECK (active_jobs_max >= 1),
    disabled BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE api_keys (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_hash TEXT NOT NULL,
    hint TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);

CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash);

CREATE INDEX api_keys_account ON api_keys (account_id, created_at, seq);

CREATE TABLE jobs (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    status TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    phase TEXT,
    progress INTEGER,
    created_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    options JSONB NOT NULL,
    credits_charged INTEGER NOT NULL DEFAULT 0,
    result JSONB,
    error JSONB,
    attempts INTEGER NOT NULL DEFAULT 0,
    image_key TEXT,
    result_key TEXT,
    result_expires_at TIMESTAMPTZ,
    lease_expires_at TIMESTAMPTZ
);

CREATE INDEX jobs_queued ON jobs (seq) WHERE status = 'queued';

CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE status = 'running';

CREATE INDEX jobs_account_status ON jobs (account_id, status);

CREATE INDEX jobs_result_expiry ON jobs (result_expires_at)
    WHERE result_key IS NOT NULL;

CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at);

CREATE TABLE rate_counts (
    bucket TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bucket, window_start)
);

CREATE INDEX rate_counts_window ON rate_counts (window_start);
