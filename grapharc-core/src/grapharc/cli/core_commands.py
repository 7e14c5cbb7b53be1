"""Core's own CLI commands (``plugins``, ``version``), added through the commands hook.

Each command imports what it needs inside its body, so listing commands for
``grapharc --help`` costs nothing beyond Typer.
"""

from __future__ import annotations

from typing import Any

import typer

from grapharc.cli.lazy import lazy_command
from grapharc.cli.output import JsonOption

HELP_DEMO = (
    "Runnable lessons, one mechanism each, every one with a failure gate. Scripted models by "
    "default: free and deterministic. --model SPEC runs stages 1-6 and the capstone against a real "
    "backend.")


COMMANDS = (
    ("models", "models_command:add_models_command",
     "Show what a model spec resolves to, or list every backend; --check tests reachability."),
    ("plan", "governance_commands:add_governance_commands",
     "Governed loop: propose -> admit -> execute -> replan, until a stated stop."),
    ("run", "governance_commands:add_governance_commands",
     "Run a topology you wrote through the same admission gate."),
    ("kinds", "governance_commands:add_governance_commands",
     "List every proposable kind with the distribution (or module) it comes from."),
    ("trace", "observe_commands:add_observe_commands",
     "Pretty-print a trace, one event per line, optionally filtered (--json: one document)."),
    ("metrics", "observe_commands:add_observe_commands",
     "Tokens, retries, termination reason, per-node counts and durations of a run (or every run)."),
    ("viz", "observe_commands:add_observe_commands",
     "A Mermaid flowchart of the path a run took, with counts on repeated edges."),
    ("replay", "observe_commands:add_observe_commands",
     "Reconstruct a run from its trace (node sequence, folded state, timing, failures); runs nothing."),
    ("diff", "observe_commands:add_observe_commands",
     "What changed between two runs: path, state, tokens, outcome (exit 1 when they differ)."),
    ("cost", "observe_commands:add_observe_commands",
     "Spend per run, thread and node: provider-recorded cost and rate-card estimate, never mixed."),
    ("agent", "agent_command:add_agent_command",
     "Run a tool-using agent on a workspace, every call governed and on the trace."),
    ("config", "config_command:add_config_commands",
     "Settings: what each command resolves, and from where."),
    ("session", "session_commands:add_session_commands",
     "Durable sessions: where each thread stands, and retention."),
    ("cron", "cron_commands:add_cron_commands",
     "Cron schedules of runs, fired by grapharc serve: list, add, delete."),
    ("memory", "memory_commands:add_memory_commands",
     "Claim memory: add a claim with provenance, search, follow a correction chain, list "
     "contradictions, collect orphaned blobs."),
    ("policy", "policy_commands:add_policy_commands",
     "Policy documents: check one before any agent or plan runs under it."),
    ("plugin", "plugin_commands:add_plugin_commands",
     "Write a plugin of your own: a distribution skeleton that works and is tested."),
    ("demo", "demo_commands:add_demo_group", HELP_DEMO),
)
"""Each command family's top-level names: the adder in ``grapharc.cli`` that builds it, and its
help line (what ``grapharc --help`` shows without importing the family)."""


GROUPS = frozenset({"config", "session", "cron", "memory", "policy", "plugin", "demo"})


def add_core_commands(app: typer.Typer) -> None:
    """Register core's commands on ``app``: its own, then each family's, declared lazily."""
    app.command("plugins")(plugins_command)
    app.command("version")(version_command)
    for name, target, help_line in COMMANDS:
        lazy_command(app, name, f"grapharc.cli.{target}", help_line, group=name in GROUPS)


def plugins_command(as_json: JsonOption = False) -> None:
    """List each installed distribution, its version, what it registered, and load errors."""
    from grapharc.cli.output import ExitCode, emit
    from grapharc.plugins.report import plugin_report, render_plugin_report

    document = plugin_report()
    code = ExitCode.OK if document["ok"] else ExitCode.NEGATIVE
    emit(document, as_json, render_plugin_report, code)


def version_command(as_json: JsonOption = False) -> None:
    """Print the version of grapharc-core and of every loaded plugin."""
    from grapharc._version import __version__
    from grapharc.cli.output import emit
    from grapharc.plugins import get_host

    document: dict[str, Any] = {
        "grapharc": __version__,
        "distributions": {name: rec.version for name, rec in get_host().records.items()},
    }
    emit(document, as_json, lambda doc: f"grapharc {doc['grapharc']}")
