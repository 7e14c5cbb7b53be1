"""MkDocs hook: the CLI reference page, rendered from the installed ``grapharc`` Typer app.

Each ``<!-- grapharc-cli -->`` marker in a page is replaced by the help text of ``grapharc``
and of every command and sub-command under it, exactly as ``grapharc ... --help`` prints it,
so the page can never drift from the CLI. Commands declared lazily are built on look-up, as
when they run.
"""

from __future__ import annotations

from typing import Any

import typer

from grapharc.cli.main import build_app

MARKER = "<!-- grapharc-cli -->"
WIDTH = 78
"""What Click wraps help at in a terminal of 80 columns or more (its 80, less a margin of 2);
set here so the page does not depend on the terminal that builds it."""


def _sections(command: Any, path: list[str], parent: Any) -> list[str]:
    """A heading and the help text of ``command``, then the same for each of its sub-commands."""
    settings = {**command.context_settings, "terminal_width": WIDTH}
    context = command.context_class(command, info_name=path[-1], parent=parent, **settings)
    level = "#" * min(len(path) + 1, 6)
    found = [f"{level} `{' '.join(path)}`\n\n```text\n{command.get_help(context)}\n```\n"]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(context):
            found += _sections(command.get_command(context, name), [*path, name], context)
    return found


def render() -> str:
    """The whole command tree's help, as Markdown."""
    return "\n".join(_sections(typer.main.get_command(build_app()), ["grapharc"], None))


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker, where a page has one, with the rendered command tree."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
