"""``grapharc config show``: every setting a command would use, and the layer each came from.

The same resolution every entry point makes (:mod:`grapharc.governed.settings`: flag > env >
grapharc.toml > the command's built-ins), so what it prints is what ``plan``, ``run``, ``agent``,
``serve`` or the ``session`` commands see from this directory. Flags are the command's own and
are not given here; the ``source`` of each value is ``env``, ``file`` or ``default``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from grapharc.cli.options import ConfigFile
from grapharc.cli.output import JsonOption, emit, fail
from grapharc.errors import ConfigurationError, GraphARCError


class UnknownCommandError(ConfigurationError):
    """``config show --command`` names a command that has no settings."""


def add_config_commands(app: typer.Typer) -> None:
    """Add the ``config`` group (``show``) to ``app``."""
    group = typer.Typer(name="config", help="Settings: what each command resolves, and from where.",
                        no_args_is_help=True)
    group.command("show")(show_command)
    app.add_typer(group, name="config")


def show_command(
    command: Annotated[str, typer.Option(
        "--command", help="Whose settings to show: plan, run, agent, serve or session.")] = "plan",
    config: ConfigFile = None,
    as_json: JsonOption = False,
) -> None:
    """Show every setting ``--command`` would use here: its value, layer (env, file, default) and origin."""
    from grapharc.config.settings import KEYS
    from grapharc.governed.settings import COMMANDS, resolve_config

    try:
        if command not in COMMANDS:
            raise UnknownCommandError(f"no command {command!r} has settings; commands: {', '.join(COMMANDS)}")
        resolved = resolve_config(command, {}, config_path=config)
    except GraphARCError as exc:
        fail(exc, as_json)
    rows = []
    for name, key in KEYS.items():
        setting = resolved.setting(name)
        rows.append({"name": name, "value": None if setting is None else _plain(setting.value),
                     "source": "unset" if setting is None else setting.source,
                     "origin": None if setting is None else setting.origin, "help": key.help})
    document = {"command": command, "config": {"path": str(resolved.path) if resolved.path else None,
                                               "line": resolved.line()}, "settings": rows}
    emit(document, as_json, render_settings)


def _plain(value: Any) -> Any:
    """A value as JSON holds it (a resolved path as its text, a list of names as a list)."""
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value if isinstance(value, str | int | float | bool) else str(value)


def render_settings(doc: dict[str, Any]) -> str:
    """One line per setting: name, value, and where it came from."""
    width = max(len(row["name"]) for row in doc["settings"])
    lines = [f"command   : {doc['command']}", f"config    : {doc['config']['line']}", ""]
    for row in doc["settings"]:
        if row["source"] == "unset":
            lines.append(f"{row['name']:<{width}}  -")
        else:
            value = ", ".join(row["value"]) if isinstance(row["value"], list) else row["value"]
            lines.append(f"{row['name']:<{width}}  {value}  [{row['source']}: {row['origin']}]")
    return "\n".join(lines)
