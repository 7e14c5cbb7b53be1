"""Runs one tool call inside the container: ``python -m grapharc.tools.container.runner``.

The call comes on stdin (read to its end before the tool runs); the workspace is the working
directory the executor gave the container. The import
path the host derived is checked here, inside the container, where importing it runs no host
code: it must name a callable whose own ``module:qualname`` is that path. The tool's prints
go to stderr so that stdout carries exactly one line, the answer.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from grapharc.tools.container.protocol import (
    NOT_IMPORTABLE,
    NOT_JSON,
    answer_line,
    decode_call,
    json_problem,
)


def resolve(import_path: str) -> Callable[..., Any] | str:
    """The function ``import_path`` names, or why it cannot be used."""
    module_name, _, name = import_path.partition(":")
    try:
        function: Callable[..., Any] = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        return f"{import_path} cannot be imported in this image ({type(exc).__name__}: {exc})"
    own = f"{getattr(function, '__module__', None)}:{getattr(function, '__qualname__', None)}"
    if not callable(function) or own != import_path:
        return f"{import_path} names {own} in this image, not the tool's function"
    return function


def answer(import_path: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The answer to one call: its result, the exception it raised, or why it was refused."""
    function = resolve(import_path)
    if isinstance(function, str):
        return {"refused": {"code": NOT_IMPORTABLE, "message": function}}
    try:
        result = function(os.getcwd(), **args)
    except Exception as exc:
        return {"raised": {"type": type(exc).__name__, "message": str(exc)}}
    if problem := json_problem(result, "result"):
        return {"refused": {"code": NOT_JSON, "message": f"tool {name!r} returned {problem}"}}
    return {"result": result}


def main() -> int:
    """Answer the call read from stdin on the original stdout; 2 if there is no call."""
    raw = sys.stdin.read()
    if not raw:
        print("no call on stdin: this runner is started by GraphARC's container executor",
              file=sys.stderr)
        return 2
    import_path, name, args, marker = decode_call(raw)
    sys.stdout.flush()
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    reply = answer(import_path, name, args)
    sys.stdout.flush()
    with os.fdopen(answer_fd, "w", encoding="utf-8") as out:
        out.write(answer_line(marker, reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())
