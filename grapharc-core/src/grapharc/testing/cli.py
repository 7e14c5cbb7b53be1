"""Run a ``grapharc`` command in-process as a user's shell would; walk an app's commands.

Goes through :func:`grapharc.cli.main.run`, so usage errors, known errors and ``--json``
are reported exactly as the installed command reports them. Standard input is empty, so a
command that would wait for a person fails instead of hanging a test.
"""

from __future__ import annotations

import io
import sys
import typing
from collections.abc import Iterator, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import typer


@dataclass(frozen=True)
class CliResult:
    """A finished command: its exit code and everything it wrote to stdout and stderr."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_cli(args: Sequence[str], *, app: typer.Typer | None = None) -> CliResult:
    """``grapharc ARGS`` (or ``app`` with the same entry point), run here with stdin empty."""
    from grapharc.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = run([str(arg) for arg in args], app=app)
    finally:
        sys.stdin = stdin
    return CliResult(code, out.getvalue(), err.getvalue())


def commands(app: typer.Typer) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every runnable command of ``app`` as (its words, e.g. ``("session", "list")``, the command)."""

    def walk(command: Any, words: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        if not hasattr(command, "list_commands"):
            yield words, command
            return
        context = command.make_context(words[-1] if words else "grapharc", [], resilient_parsing=True)
        for name in sorted(command.list_commands(context)):  # a declared command is built here
            yield from walk(command.get_command(context, name), (*words, name))

    yield from walk(typer.main.get_command(app), ())


def untyped_parameters(app: typer.Typer) -> list[str]:
    """``"command --option"`` for every numeric or path parameter declared without a shared type.

    A number or path must be parsed by one of :mod:`grapharc.cli.options`' types, so NaN, a
    huge number, a FIFO or a folder where a file belongs is refused the same way everywhere.
    Reads Typer's record of each parameter's annotation and parser.
    """
    from grapharc.cli.options import OptionType

    found = []
    for words, command in commands(app):
        for param in command.params:
            descriptor = param.type_descriptor
            annotation = descriptor.annotation
            leaf = (typing.get_args(annotation) or (annotation,))[0] if descriptor.is_list else annotation
            checked = leaf in (int, float) or (isinstance(leaf, type) and issubclass(leaf, PurePath))
            if checked and not isinstance(descriptor.parameter_info.parser, OptionType):
                found.append(f"{' '.join(words)} {param.opts[0]}")
    return found
