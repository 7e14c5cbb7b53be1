"""Entry point of the ``grapharc`` command: build the app from every plugin, run it.

Parsing is done with ``standalone_mode=False`` so that usage errors and known
errors are reported by :mod:`grapharc.cli.output` (honouring ``--json``)
instead of by Click, and so no traceback reaches a user for bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from grapharc.cli.output import ExitCode, json_option, report_error
from grapharc.errors import ConfigurationError, GraphARCError

HELP = (
    "GraphARC: a governed agent runtime on LangGraph. A planner proposes, a deterministic "
    "checker admits, and only then does anything execute.\n\n"
    "Every command takes --json. Exit codes: 0 did the job, 1 ran and the answer was "
    "negative, 2 could not run."
)
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}
"""Every command and group inherits these from the root's context: -h works like --help."""


class MisplacedOptionError(ConfigurationError):
    """A command's own option given before the command, where the root cannot honour it."""


RootJson = Annotated[bool, json_option(hidden=True)]
"""``--version --json`` only: hidden from ``grapharc --help``, where it read as a switch for every
command (each command takes ``--json`` after its name)."""


def root(
    context: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit (with --json: "
                                                             "as a JSON document).")] = False,
    as_json: RootJson = False,
) -> None:
    """The root's own options: ``--version`` (with ``--json``); a bare ``--json`` is misplaced."""
    if version:
        from grapharc.cli.core_commands import version_command

        version_command(as_json)
        raise typer.Exit(int(ExitCode.OK))
    if as_json or context.invoked_subcommand is None:
        raise MisplacedOptionError("--json goes after the command, as in: grapharc plugins --json",
                                   hint="see: grapharc --help")


def build_app() -> typer.Typer:
    """The root app with every loaded plugin's commands merged in (core's first)."""
    from grapharc.cli.completion import RootGroup
    from grapharc.plugins import get_host

    app = typer.Typer(name="grapharc", help=HELP, no_args_is_help=True, add_completion=True,
                      pretty_exceptions_enable=False, rich_markup_mode=None,
                      context_settings=CONTEXT_SETTINGS, invoke_without_command=True, cls=RootGroup)
    app.callback()(root)
    get_host().add_commands(app)
    return app


def run(argv: Sequence[str] | None = None, *, app: typer.Typer | None = None) -> int:
    """Run the CLI (``app``, by default the whole ``grapharc``) with ``argv``; return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    try:
        command = typer.main.get_command(app or build_app())
        result = command.main(args=args, prog_name="grapharc", standalone_mode=False)
    except typer.Abort:
        return report_error("Aborted", "aborted", "", as_json)
    except typer.TyperException as exc:  # Typer's (vendored Click's) usage errors
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
            sys.stderr.write(context.get_help() + "\n")
            return int(ExitCode.CANNOT_RUN)
        hint = f"see: {context.command_path if context else 'grapharc'} --help"
        return report_error("UsageError", exc.format_message(), hint, as_json)
    except GraphARCError as exc:
        return report_error(exc.code, str(exc), exc.hint, as_json)
    except KeyboardInterrupt:
        return report_error("Interrupted", "interrupted", "", as_json, ExitCode.CANNOT_RUN)
    except Exception as exc:  # a bug, not bad input: one line unless GRAPHARC_DEBUG is set
        return report_error("InternalError", f"{type(exc).__name__}: {exc}",
                            "this is a GraphARC bug; GRAPHARC_DEBUG=1 shows the traceback",
                            as_json)
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
