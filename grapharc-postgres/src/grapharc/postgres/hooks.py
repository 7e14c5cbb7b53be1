"""grapharc-postgres's hook implementations: the ``postgres``/``postgresql`` schemes (sessions,
checkpoints, traces) and ``grapharc db``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins import RegisterStore, StoreInfo, hookimpl

if TYPE_CHECKING:
    import typer

SCHEMES = ("postgres", "postgresql")


@hookimpl
def register_stores(register: RegisterStore) -> None:
    for scheme in SCHEMES:
        register(StoreInfo(scheme=scheme, kinds=frozenset({"sessions"}),
                           factory="grapharc.postgres.sessions:open_session_store",
                           description="session status, approvals, leases and audit trail in PostgreSQL"))
        register(StoreInfo(scheme=scheme, kinds=frozenset({"checkpoints"}),
                           factory="grapharc.postgres.checkpoints:open_checkpointer",
                           description="LangGraph's Postgres savers (sync and async) over a connection pool"))
        register(StoreInfo(scheme=scheme, kinds=frozenset({"traces"}),
                           factory="grapharc.postgres.traces:open_traces",
                           description="run trace events in one table, read back as a JSONL trace"))
        register(StoreInfo(scheme=scheme, kinds=frozenset({"runs"}),
                           factory="grapharc.postgres.runs:open_run_store",
                           description="the server's run records and run queue, claimed with SKIP LOCKED"))


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from grapharc.postgres.cli import db_app

    app.add_typer(db_app, name="db")
