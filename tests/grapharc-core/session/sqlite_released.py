"""The SQLite session and run stores' schema version 1 as released, written by hand before the tables
were described once (``grapharc.session.tables``): a new file must get the schema these made,
which existing files hold."""

SESSIONS = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    thread_id TEXT PRIMARY KEY,
    graph TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('created', 'running', 'paused', 'completed', 'rejected', 'expired', 'failed')),
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    runner TEXT,
    lease_token TEXT,
    lease_expires_at REAL,
    turn TEXT,
    outcome TEXT,
    error TEXT,
    audited_step INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX IF NOT EXISTS sessions_by_status ON sessions (status, updated_at);
CREATE TABLE IF NOT EXISTS approvals (
    approval_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('gate', 'interrupt')),
    node TEXT NOT NULL,
    hold_key TEXT NOT NULL,
    question TEXT NOT NULL,
    digest TEXT NOT NULL,
    deciders TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    state TEXT NOT NULL CHECK (state IN ('open', 'approved', 'rejected', 'superseded', 'expired')),
    decided_by TEXT,
    decided_at REAL
);
CREATE INDEX IF NOT EXISTS approvals_by_thread ON approvals (thread_id, state);
CREATE TABLE IF NOT EXISTS events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    posted_at REAL NOT NULL,
    delivered_at REAL,
    turn_id TEXT
);
CREATE INDEX IF NOT EXISTS events_by_thread ON events (thread_id, delivered_at);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    node TEXT,
    step INTEGER,
    task_id TEXT,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_thread ON audit (thread_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS audit_node_once ON audit (thread_id, step, node, task_id)
    WHERE kind = 'node';
CREATE UNIQUE INDEX IF NOT EXISTS audit_run_once ON audit (thread_id, task_id) WHERE kind = 'run';
CREATE TRIGGER IF NOT EXISTS audit_is_append_only BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
CREATE TRIGGER IF NOT EXISTS audit_outlives_no_session BEFORE DELETE ON audit
WHEN EXISTS (SELECT 1 FROM sessions WHERE thread_id = OLD.thread_id)
BEGIN
    SELECT RAISE(ABORT, 'the audit trail of a live session cannot be deleted');
END;
"""

RUNS = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    after_seq INTEGER,
    stream_modes TEXT NOT NULL,
    budget TEXT,
    multitask_strategy TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted')),
    end_seq INTEGER,
    error TEXT,
    worker TEXT,
    claim_expires_at REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, status, seq);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
"""
