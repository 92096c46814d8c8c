-- Schema version 1 exactly as printjob shipped it for sqlite, before the schema was
-- written once (printjob_adapters.sql.schema). Never edit: databases made by it exist.

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    credits_balance INTEGER NOT NULL,
    credits_held INTEGER NOT NULL CHECK (credits_held >= 0),
    active_jobs_max INTEGER NOT NULL CHECK (active_jobs_max >= 1),
    disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1))
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key_hash TEXT NOT NULL,
    hint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);

CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash);

CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    status TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    phase TEXT,
    progress INTEGER,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    options TEXT NOT NULL,
    credits_charged INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    image_key TEXT,
    result_key TEXT,
    result_expires_at TEXT,
    lease_expires_at TEXT
);

CREATE INDEX jobs_status_seq ON jobs (status, seq);

CREATE INDEX jobs_account_status ON jobs (account_id, status);

CREATE INDEX jobs_result_expiry ON jobs (result_expires_at)
    WHERE result_key IS NOT NULL;

CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
) WITHOUT ROWID;

CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at);

CREATE TABLE rate_counts (
    bucket TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bucket, window_start)
) WITHOUT ROWID;

CREATE INDEX rate_counts_window ON rate_counts (window_start);
