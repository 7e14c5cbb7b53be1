"""Commands declared by name and help line, their module imported only when one runs.

``grapharc --help`` lists every command; building each from its function would import every
command module (and what they import) just to print one line apiece. A plugin's
``register_commands`` hook calls :func:`lazy_command` instead of ``app.command``: the root
group (:class:`LazyGroup`) shows the declared line and swaps in the real command, built by the
named adder, the first time the command is looked up to run or to show its own help.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo

from grapharc.errors import ConfigurationError


class DeferredCommand(TyperCommand):
    """A stand-in for a command not built yet: its help line, and the adder that builds it
    (``target``; ``group``: whether it builds a group). Each declared command gets a subclass
    carrying these two, since Typer builds a command from its class alone."""

    target: str = ""
    group: bool = False

    def load(self) -> Any:
        """The real command: ``target`` (``module:adder``) adds it to a fresh app, built here."""
        module, _, attribute = self.target.partition(":")
        adder = getattr(importlib.import_module(module), attribute)
        app = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False)  # as the root's
        adder(app)
        built = typer.main.get_group(app).commands.get(self.name or "")
        if built is None:
            raise LookupError(f"{self.target} added no command named {self.name!r}")
        return built


def _deferred() -> None:
    """The stand-in's callback; never run, since :class:`LazyGroup` builds the command first."""


def lazy_command(app: typer.Typer, name: str, target: str, help: str, *, group: bool = False) -> None:
    """Declare command ``name`` on ``app``: ``help`` is its first help line, ``target``
    (``module:adder``) a function that adds the real command to a Typer app, ``group`` whether
    it adds a group (listed after the plain commands, as Typer lists them)."""
    deferred = type(f"Deferred_{name}", (DeferredCommand,), {"target": target, "group": group})
    app.registered_commands.append(CommandInfo(name=name, cls=deferred, callback=_deferred, help=help))


def _is_group(command: Any) -> bool:
    return isinstance(command, TyperGroup) or getattr(command, "group", False) is True


class CommandNotInstalledError(ConfigurationError):
    """A command one of GraphARC's own plugins adds, asked for where that plugin is not installed."""


class LazyGroup(TyperGroup):
    """A group whose deferred commands are built on first look-up, not to list them in help."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """The command ``args`` name; one a GraphARC plugin adds but nothing installed declares is
        refused naming the distribution to install (Click would say only "No such command")."""
        from grapharc._missing import COMMAND_PROVIDERS, install_hint

        name = args[0] if args else ""
        provider = COMMAND_PROVIDERS.get(name)
        if provider is not None and name not in self.commands and not ctx.resilient_parsing:
            raise CommandNotInstalledError(
                f"grapharc {name} comes with {provider}, which is not installed or not loaded",
                hint=install_hint(provider))
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, built if it was deferred, its options' placeholders named
        (``grapharc.cli.metavars``)."""
        from grapharc.cli.metavars import name_placeholders

        command = self.commands.get(cmd_name)
        if isinstance(command, DeferredCommand) and not getattr(self, "_listing", False):
            command = self.commands[cmd_name] = command.load()
        return name_placeholders(command) if not isinstance(command, DeferredCommand) else command

    def list_commands(self, ctx: Any) -> list[str]:
        """Plain commands, then groups, each in the order registered (Typer's own order)."""
        return sorted(self.commands, key=lambda name: _is_group(self.commands[name]))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list, each deferred command by its declared help line (nothing imported)."""
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False
