"""``grapharc --show-completion [SHELL]``: the completion script of the shell named, else the current one.

Typer's ``--show-completion`` is a flag: it detects the shell from the environment and leaves a
shell name written after it to be read as a command. The root group reads that name itself, before
Typer's parsing, and hands it to Typer's own script writer (so the scripts stay Typer's).
"""

from __future__ import annotations

from typing import Any

import typer
from typer.completion import show_callback
from typer.core import TyperOption

from grapharc.cli.lazy import LazyGroup

SHOW_COMPLETION = "--show-completion"
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
"""The shells Typer writes a completion script for."""
HELP = (f"Print the completion script for SHELL ({', '.join(SHELLS)}), by default for the current shell, "
        "to copy it or customize the installation.")


class RootGroup(LazyGroup):
    """The ``grapharc`` group: its ``--show-completion`` takes the shell to write the script for."""

    def get_params(self, ctx: Any) -> list[Any]:
        """The root's options, ``--show-completion`` described as taking a shell."""
        params = super().get_params(ctx)
        for param in params:
            if param.name == "show_completion" and isinstance(param, TyperOption):
                param.help, param.metavar = HELP, "[SHELL]"
        return params

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Print the completion script and exit when the root's options ask for it."""
        shell = _shell_asked(args)
        if shell is not None and not ctx.resilient_parsing:
            show_completion(ctx, shell)
        return super().parse_args(ctx, args)


def _shell_asked(args: list[str]) -> str | None:
    """The shell named after a root ``--show-completion`` ("" for the current one), or None if the
    root's options (those before the command) do not ask for a script."""
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            return None
        if arg == SHOW_COMPLETION:
            following = args[index + 1] if index + 1 < len(args) else ""
            return "" if following.startswith("-") else following
    return None


def show_completion(ctx: Any, shell: str) -> None:
    """Print ``shell``'s completion script (the current shell's if ``shell`` is empty) and exit 0."""
    if shell and shell not in SHELLS:
        raise typer.BadParameter(f"no completion for the shell {shell!r}; the supported shells are "
                                 f"{', '.join(SHELLS)}", param_hint=f"'{SHOW_COMPLETION}'")
    show_callback(ctx, None, shell or True)  # type: ignore[arg-type]  # Typer's callback exits
