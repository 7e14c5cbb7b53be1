"""Placeholders a person reads in ``--help``: a parameter's name, not its Python type.

Typer shows a parameter declared without a ``metavar`` by its annotation (``--tenant <str>``,
``--allow <list[str]>``) and an argument's row with its type beside it (``TRACE <str>``).
:func:`name_placeholders` names each such option in capitals instead (``--tenant TENANT``) and
shows each argument by its name alone (``RUN``), in every command a plugin declares too. A
parameter whose help lists its choices (``<delete|keep>``), a flag, and an option with a metavar
of its own are left as they are.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperOption


def name_placeholders(command: Any) -> Any:
    """``command`` (and every command of a group, at any depth) with its parameters' placeholders
    named; returned for chaining."""
    for param in getattr(command, "params", ()):
        if param.name is None or _lists_choices(param):
            continue
        if isinstance(param, TyperOption) and param.metavar is None and not (param.is_flag or param.count):
            param.metavar = param.name.upper()
        elif isinstance(param, TyperArgument):
            param.metavar = param.metavar or param.name.upper()
            param.display_type_rich = _no_type  # type: ignore[method-assign]  # the row: name and help, as Click writes it
    for sub in getattr(command, "commands", {}).values():
        name_placeholders(sub)
    return command


def _lists_choices(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    return descriptor is not None and descriptor.is_choice


def _no_type(ctx: Any) -> None:
    """An argument's type column: none."""
