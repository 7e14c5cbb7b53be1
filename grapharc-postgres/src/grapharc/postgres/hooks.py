"""grapharc-postgres's hook implementations: the ``postgres``/``postgresql`` schemes (sessions,
checkpoints, traces, runs, assistants, crons, webhooks, the long-term store's items) and
``grapharc db``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import RegisterStore, StoreInfo, hookimpl
from grapharc.postgres import SCHEMES

if TYPE_CHECKING:
    import typer

STORES = (
    ("sessions", "grapharc.postgres.sessions:open_session_store",
     "session status, approvals, leases and audit trail in PostgreSQL"),
    ("checkpoints", "grapharc.postgres.checkpoints:open_checkpointer",
     "LangGraph's Postgres savers (sync and async) over a connection pool"),
    ("traces", "grapharc.postgres.traces:open_traces",
     "run trace events in one table, read back as a JSONL trace"),
    ("runs", "grapharc.postgres.runs:open_run_store",
     "the server's run records and run queue, claimed with SKIP LOCKED"),
    ("assistants", "grapharc.postgres.assistants:open_assistant_store",
     "assistants created over the API, their versions and change log"),
    ("crons", "grapharc.postgres.crons:open_cron_store",
     "cron schedules of runs, each slot claimed by one conditional UPDATE"),
    ("webhooks", "grapharc.postgres.webhooks:open_webhook_store",
     "run webhooks' delivery state, claimed with SKIP LOCKED"),
    ("items", "grapharc.postgres.items:open_item_store",
     "the long-term store's items, searched, filtered and expired in SQL, ranked by BM25"),
)
"""Each kind of store this distribution serves: its factory and what it keeps."""


@hookimpl
def register_stores(register: RegisterStore) -> None:
    for scheme in SCHEMES:
        for kind, factory, description in STORES:
            register(StoreInfo(scheme=scheme, kinds=frozenset({kind}), factory=factory,
                               description=description))


@hookimpl
def register_commands(app: typer.Typer) -> None:
    """Declare ``db``: its module loads only when the command runs."""
    from grapharc.cli.lazy import lazy_command

    lazy_command(app, "db", "grapharc.postgres.hooks:add_db_group", "Database stores: schema migrations.",
                 group=True)


def add_db_group(app: typer.Typer) -> None:
    """Add the real ``db`` group to ``app``."""
    from grapharc.postgres.cli import db_app

    app.add_typer(db_app, name="db")
