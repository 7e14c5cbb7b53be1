"""The real session and demo commands, mounted on a Typer app of our own, run as a process.

``GRAPHARC_TEST_BLOCK_PAYROLL=READY`` replaces the demo's payroll lookup with one that
writes READY and sleeps until killed: a deterministic point to SIGKILL a run mid-way.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import typer

from grapharc.cli.session_commands import add_approval_demo, add_session_commands


def build_app() -> typer.Typer:
    app = typer.Typer(name="grapharc", no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False)
    add_session_commands(app)
    demo = typer.Typer(name="demo", no_args_is_help=True)
    add_approval_demo(demo)
    app.add_typer(demo, name="demo")
    return app


def block_payroll(ready: str) -> None:
    import grapharc.examples.approval as demo

    def parked(customer: str) -> int:
        Path(ready).write_text(str(os.getpid()))
        time.sleep(3600)
        raise AssertionError("unreachable")

    demo.payroll_income = parked


def main(argv: list[str]) -> int:
    if "GRAPHARC_TEST_BLOCK_PAYROLL" in os.environ:
        block_payroll(os.environ["GRAPHARC_TEST_BLOCK_PAYROLL"])
    from grapharc.cli.main import run

    return run(argv, app=build_app())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
