"""Core's own CLI commands (``plugins``, ``version``), added through the commands hook.

Each command imports what it needs inside its body, so listing commands for
``grapharc --help`` costs nothing beyond Typer.
"""

from __future__ import annotations

from typing import Any

import typer

from grapharc.cli.output import JsonOption


def add_core_commands(app: typer.Typer) -> None:
    """Register core's commands on ``app``: its own, then each command family's."""
    from grapharc.cli.agent_command import add_agent_command
    from grapharc.cli.config_command import add_config_commands
    from grapharc.cli.demo_commands import build_demo_app
    from grapharc.cli.governance_commands import add_governance_commands
    from grapharc.cli.memory_commands import add_memory_commands
    from grapharc.cli.models_command import add_models_command
    from grapharc.cli.observe_commands import add_observe_commands
    from grapharc.cli.session_commands import add_approval_demo, add_session_commands

    app.command("plugins")(plugins_command)
    app.command("version")(version_command)
    add_models_command(app)
    add_config_commands(app)
    add_governance_commands(app)
    add_observe_commands(app)
    add_session_commands(app)
    add_memory_commands(app)
    add_agent_command(app)
    demo_app = build_demo_app()
    add_approval_demo(demo_app)
    app.add_typer(demo_app, name="demo")


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
