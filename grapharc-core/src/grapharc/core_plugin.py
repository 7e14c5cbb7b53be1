"""Core's own hook implementations: core is its own first plugin, registered like any other.

This module sits one layer above :mod:`grapharc.plugins` (which knows no planner, policy or
CLI) because what it registers names those layers: the ``mock/`` scripted backend, the
``local`` executor, the ``hashing:`` embedder, the in-process claim and long-term item stores
(``memory:``), the SQLite
checkpoint, session and run stores (``sqlite:``, also what a bare path means for those
kinds), the JSONL trace file (``file:``, also what a bare trace path means), the stdlib node
kinds, the flag / env / grapharc.toml / generated / registry-default policy sources, and the
core CLI commands. Factories are named as strings so nothing heavy is imported until one is
used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.plugins.hookspecs import (
    RegisterBackend,
    RegisterEmbedder,
    RegisterExecutor,
    RegisterNodeKind,
    RegisterPolicySource,
    RegisterStore,
    hookimpl,
)
from grapharc.plugins.types import BackendInfo, EmbedderInfo, ExecutorInfo, PolicySourceInfo, StoreInfo

if TYPE_CHECKING:
    import typer


@hookimpl
def register_node_kinds(register: RegisterNodeKind) -> None:
    from grapharc.stdlib import stdlib_specs

    for spec in stdlib_specs():
        register(spec)


@hookimpl
def register_model_backends(register: RegisterBackend) -> None:
    register(BackendInfo(
        prefix="mock", factory="grapharc.models.scripted:create_scripted_model",
        vendor="grapharc", capabilities=frozenset({"completion", "async", "streaming", "tools"}),
        description="scripted replies (and tool calls): free, deterministic, no network"))


@hookimpl
def register_embedders(register: RegisterEmbedder) -> None:
    register(EmbedderInfo(scheme="hashing", factory="grapharc.memory.hashing_embedder:open_hashing_embedder",
                          description="terms hashed into N dimensions (hashing:N, 256 by default): local, "
                                      "deterministic, no model; matches words, not meanings"))


@hookimpl
def register_executors(register: RegisterExecutor) -> None:
    register(ExecutorInfo(name="local", factory="grapharc.harness.executors:create_local_executor",
                          description="runs the tool in this process; confines nothing"))


@hookimpl
def register_stores(register: RegisterStore) -> None:
    register(StoreInfo(scheme="memory", kinds=frozenset({"claims"}),
                       factory="grapharc.memory.inprocess:open_inprocess_store",
                       description="claims in a dict for the life of the process"))
    register(StoreInfo(scheme="memory", kinds=frozenset({"items"}),
                       factory="grapharc.memory.longterm.inprocess:open_inprocess_items",
                       description="long-term store items in dicts, with a search index, for the life "
                                   "of the process"))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"checkpoints"}),
                       factory="grapharc.sqlite.checkpoints:open_sqlite_checkpointer",
                       description="LangGraph's SQLite savers over DIR/checkpoints.db or one file",
                       local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"sessions"}),
                       factory="grapharc.sqlite.sessions:open_session_store",
                       description="session status, approvals, leases and audit trail in DIR/sessions.db "
                                   "or one file", local_default=True))
    register(StoreInfo(scheme="file", kinds=frozenset({"traces"}),
                       factory="grapharc.trace.store:open_file_traces",
                       description="run traces appended to one JSONL file", local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"runs"}),
                       factory="grapharc.sqlite.runs:open_run_store",
                       description="the server's run records and run queue in DIR/runs.db or one file",
                       local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"assistants"}),
                       factory="grapharc.sqlite.assistants:open_assistant_store",
                       description="assistants created over the API, their versions and change log, "
                                   "in DIR/runs.db or one file", local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"crons"}),
                       factory="grapharc.sqlite.crons:open_cron_store",
                       description="cron schedules of runs in DIR/runs.db or one file", local_default=True))
    register(StoreInfo(scheme="sqlite", kinds=frozenset({"webhooks"}),
                       factory="grapharc.sqlite.webhooks:open_webhook_store",
                       description="run webhooks' delivery state, beside the runs in DIR/runs.db or one file",
                       local_default=True))


@hookimpl
def register_policy_sources(register: RegisterPolicySource) -> None:
    register(PolicySourceInfo(name="config", precedence=30,
                              load="grapharc.policy.sources:from_config",
                              description="--policy, GRAPHARC_POLICY or policy = ... in grapharc.toml"))
    register(PolicySourceInfo(name="generated", precedence=20,
                              load="grapharc.policy.sources:from_generated",
                              description=".grapharc/generated-policy.toml, written once by a model"))
    register(PolicySourceInfo(name="registry-default", precedence=10,
                              load="grapharc.policy.sources:from_registry_default",
                              description="the default shipped with the registry's kinds"))


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from grapharc.cli.core_commands import add_core_commands

    add_core_commands(app)
