"""Every entry point's settings, resolved one way: flag > env (``GRAPHARC_*``) > grapharc.toml > built-in.

``plan``, ``run``, ``agent``, ``serve`` and the ``session`` commands differ only in their built-in
defaults, listed here; the layers and the provenance of each value are :mod:`grapharc.config`'s.
``grapharc config show --command NAME`` prints what a command would use and where each value
came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from grapharc.config.settings import Config, load_config
from grapharc.planner.surface import DEMO, PLUGINS
from grapharc.redaction import mark_secret_names
from grapharc.session.location import DEFAULT_SESSIONS

Command = Literal["plan", "run", "agent", "serve", "session"]
BUILT_INS: Mapping[Command, Mapping[str, Any]] = {
    "plan": {"registry": DEMO, "max_tokens": 500_000, "max_iterations": 1_000},
    "run": {"registry": PLUGINS},
    "agent": {},
    "serve": {"sessions": DEFAULT_SESSIONS},
    "session": {"sessions": DEFAULT_SESSIONS},
}
"""Each command's defaults: an agent keeps no session and a server serves ``.grapharc/sessions``
unless a layer says otherwise; ``plan`` budgets its loop and proposes from the incident demo."""
COMMANDS: tuple[Command, ...] = tuple(BUILT_INS)


def resolve_config(command: Command, flags: Mapping[str, Any], *, config_path: Path | None = None,
                   cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """The settings of one ``command``: flag > env > grapharc.toml > that command's built-ins. The
    variables ``secret_env`` names are marked secret for the rest of the process (redacted)."""
    config = load_config(flags, config=config_path, cwd=cwd, env=env, defaults=BUILT_INS[command])
    marked = config.value("secret_env")
    if marked:
        mark_secret_names(marked.split(","))
    return config


TOOL_LIMITS = {"tool_memory_mb": "memory_mb", "tool_processes": "processes",
               "tool_cpu_seconds": "cpu_seconds", "tool_file_mb": "file_mb"}
"""The settings that limit one tool call, and the ``CallLimits`` field each sets."""


def tool_limits(config: Config) -> dict[str, int]:
    """The per-call limits some layer set, by ``CallLimits`` field (unset ones keep its defaults)."""
    return {field: config.value(name) for name, field in TOOL_LIMITS.items()
            if config.value(name) is not None}
