"""Output discipline shared by every command.

stdout carries only the result (one JSON document with ``--json``); messages,
hints and progress go to stderr. Exit codes: 0 did the job, 1 ran and the
answer was negative, 2 could not run. A known error is one line naming what is
wrong and what to do; ``GRAPHARC_DEBUG=1`` adds the traceback.
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from collections.abc import Callable
from typing import Annotated, Any, NoReturn

import typer

from grapharc.errors import ExitCode

JSON_OPTION_HELP = "Print one JSON document on stdout (errors too)."


def json_option(*, hidden: bool = False) -> Any:
    """The one ``--json`` option every command takes (``hidden``: left out of its help)."""
    return typer.Option("--json", help=JSON_OPTION_HELP, hidden=hidden)


JsonOption = Annotated[bool, json_option()]


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on (escape sequences, carriage return, line breaks, bidi overrides)."""


def terminal_text(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape (``\\x1b``, ``\\n``).

    Data (a goal, trace content, model output) must never move the cursor or start a
    line of its own, or it could fake what a command printed; tabs stay as they are.
    """
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def terminal_safe(value: Any) -> Any:
    """``value`` with :func:`terminal_text` applied to every string in it, dict keys included."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {terminal_safe(key): terminal_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [terminal_safe(item) for item in value]
    if isinstance(value, tuple):
        return tuple(terminal_safe(item) for item in value)
    return value


def debug_enabled() -> bool:
    return os.environ.get("GRAPHARC_DEBUG", "").strip() not in {"", "0"}


def document_text(document: Any) -> str:
    """``document`` as indented JSON; NaN and infinities are refused (ValueError), as JSON has none."""
    return json.dumps(document, indent=2, default=str, ensure_ascii=False, allow_nan=False)


def write_json(document: Any) -> None:
    """Write one JSON document (and a newline) to stdout."""
    sys.stdout.write(document_text(document) + "\n")
    sys.stdout.flush()


def emit(document: Any, as_json: bool, render: Callable[[Any], str],
         code: ExitCode = ExitCode.OK) -> None:
    """Print the result (JSON, or text rendered from a terminal-safe copy) and exit with ``code``
    if it is not 0. A document that does not say ``ok`` itself says whether the command did its
    job (exit 0).
    """
    if isinstance(document, dict) and "ok" not in document:
        document = {"ok": code == ExitCode.OK, **document}
    if as_json:
        write_json(document)
    else:
        text = render(terminal_safe(document))
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if code != ExitCode.OK:
        raise typer.Exit(int(code))


def error_document(code: str, message: str, hint: str = "") -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if hint:
        error["hint"] = hint
    return {"ok": False, "error": error}


def report_error(code: str, message: str, hint: str, as_json: bool,
                 exit_code: ExitCode = ExitCode.CANNOT_RUN) -> int:
    """Show an error the way the output discipline says and return the exit code."""
    if as_json:
        write_json(error_document(code, message, hint))
    else:
        sys.stderr.write(f"error: {terminal_text(message)}\n")
        if hint:
            sys.stderr.write(f"hint: {terminal_text(hint)}\n")
    if debug_enabled():
        traceback.print_exc(file=sys.stderr)
    return int(exit_code)


def fail(exc: BaseException, as_json: bool, exit_code: ExitCode = ExitCode.CANNOT_RUN) -> NoReturn:
    """Report ``exc`` (a known error) and exit; used inside commands."""
    hint = getattr(exc, "hint", "")
    code = getattr(exc, "code", type(exc).__name__)
    raise typer.Exit(report_error(str(code), str(exc), hint, as_json, exit_code))
