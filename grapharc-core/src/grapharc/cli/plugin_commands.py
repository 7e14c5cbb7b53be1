"""The ``plugin`` commands: ``plugin new`` writes a new plugin distribution to start from.

The skeleton itself is :mod:`grapharc.plugins.skeleton`'s; this only parses the command line
and reports, one JSON document with ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grapharc.cli.options import Folder, option
from grapharc.cli.output import JsonOption, emit, fail
from grapharc.errors import GraphARCError

KIND_HELP = "What the plugin provides: backend (a model backend), store (an artifact store), executor " \
            "(a tool executor), tools (a tool for agents) or kind (a node kind)."


def add_plugin_commands(app: typer.Typer) -> None:
    """Add the ``plugin`` group (new) to ``app``."""
    group = typer.Typer(name="plugin", no_args_is_help=True,
                        help="Write a plugin of your own: a distribution skeleton that works and is tested.")
    group.command("new")(new_command)
    app.add_typer(group, name="plugin")


def new_command(
    name: Annotated[str, typer.Argument(
        metavar="NAME", help="The distribution's name, e.g. acme-echo (its package: acme_echo).")],
    kind: Annotated[str, typer.Option("--kind", metavar="KIND", help=KIND_HELP)],
    folder: Annotated[Path | None, option(
        "--dir", kind=Folder("plugin's folder"), help="Where to write it (default: ./NAME); absent or "
                                                       "empty.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Write a plugin distribution: pyproject (entry point, grapharc-core range), hooks, a working
    implementation, a README and a test that runs the kind's conformance kit."""
    from grapharc.plugins.skeleton import write_skeleton

    try:
        written = write_skeleton(name, kind, folder if folder is not None else Path(name))
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(written.as_dict(), as_json, render_written)


def render_written(document: dict[str, Any]) -> str:
    """What a person reads: where the skeleton is, what it registers, and what to do next."""
    files = "\n".join(f"  {name}" for name in document["files"])
    return (f"wrote {document['distribution']} ({document['kind']}: {document['registers']}) "
            f"in {document['folder']}:\n{files}\n"
            f"next: cd {document['folder']} && pip install -e '.[test]' && pytest")
