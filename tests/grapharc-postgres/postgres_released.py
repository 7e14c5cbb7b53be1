"""grapharc-postgres's migrations 1 to 3 as released, written by hand before the session and run
tables were described once (``grapharc.session.tables``): the schema today's migrations make must
be the one these made, which existing databases hold."""

RELEASED_MIGRATIONS = ((1, "sessions, approvals, events and audit", """
CREATE TABLE grapharc_sessions (
    thread_id TEXT PRIMARY KEY,
    graph TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('created', 'running', 'paused', 'completed', 'rejected', 'expired', 'failed')),
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    runner TEXT,
    lease_token TEXT,
    lease_expires_at DOUBLE PRECISION,
    turn JSONB,
    outcome TEXT,
    error TEXT,
    audited_step INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX grapharc_sessions_by_status ON grapharc_sessions (status, updated_at);
CREATE TABLE grapharc_approvals (
    seq BIGSERIAL UNIQUE,
    approval_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('gate', 'interrupt')),
    node TEXT NOT NULL,
    hold_key TEXT NOT NULL,
    question TEXT NOT NULL,
    digest TEXT NOT NULL,
    deciders JSONB NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION,
    state TEXT NOT NULL CHECK (state IN ('open', 'approved', 'rejected', 'superseded', 'expired')),
    decided_by TEXT,
    decided_at DOUBLE PRECISION
);
CREATE INDEX grapharc_approvals_by_thread ON grapharc_approvals (thread_id, state);
CREATE TABLE grapharc_events (
    event_id BIGSERIAL PRIMARY KEY,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload JSONB NOT NULL,
    posted_at DOUBLE PRECISION NOT NULL,
    delivered_at DOUBLE PRECISION,
    turn_id TEXT
);
CREATE INDEX grapharc_events_by_thread ON grapharc_events (thread_id, delivered_at);
CREATE TABLE grapharc_audit (
    seq BIGSERIAL PRIMARY KEY,
    thread_id TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    node TEXT,
    step INTEGER,
    task_id TEXT,
    detail JSONB NOT NULL
);
CREATE INDEX grapharc_audit_by_thread ON grapharc_audit (thread_id, seq);
CREATE UNIQUE INDEX grapharc_audit_node_once ON grapharc_audit (thread_id, step, node, task_id)
    WHERE kind = 'node';
CREATE UNIQUE INDEX grapharc_audit_run_once ON grapharc_audit (thread_id, task_id) WHERE kind = 'run';
CREATE FUNCTION grapharc_audit_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'the audit trail is append-only';
    END IF;
    IF EXISTS (SELECT 1 FROM grapharc_sessions WHERE thread_id = OLD.thread_id) THEN
        RAISE EXCEPTION 'the audit trail of a live session cannot be deleted';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER grapharc_audit_is_append_only BEFORE UPDATE OR DELETE ON grapharc_audit
    FOR EACH ROW EXECUTE FUNCTION grapharc_audit_guard();
"""), (2, "trace events, and a notification on each audit or trace write", """
CREATE TABLE grapharc_trace_events (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT,
    thread_id TEXT,
    line TEXT NOT NULL,
    written_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX grapharc_trace_events_by_run ON grapharc_trace_events (run_id, seq);
CREATE INDEX grapharc_trace_events_by_thread ON grapharc_trace_events (thread_id, seq);
CREATE FUNCTION grapharc_notify_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], thread) FROM (SELECT DISTINCT COALESCE(thread_id, '') AS thread
                                               FROM written) AS threads;
    RETURN NULL;
END $$;
CREATE TRIGGER grapharc_audit_notifies AFTER INSERT ON grapharc_audit REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION grapharc_notify_write('grapharc_audit');
CREATE TRIGGER grapharc_trace_notifies AFTER INSERT ON grapharc_trace_events REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION grapharc_notify_write('grapharc_trace');
"""), (3, "runs and the run queue", """
CREATE TABLE grapharc_runs (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    after_seq BIGINT,
    stream_modes TEXT NOT NULL,
    budget TEXT,
    multitask_strategy TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted')),
    end_seq BIGINT,
    error TEXT,
    worker TEXT,
    claim_expires_at DOUBLE PRECISION,
    cancel_requested BOOLEAN NOT NULL DEFAULT false,
    attempts INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL
);
CREATE INDEX grapharc_runs_by_thread ON grapharc_runs (thread_id, status, seq);
CREATE INDEX grapharc_runs_by_status ON grapharc_runs (status, seq);
"""))
