"""Shared helpers for the demo tests: a working folder, the demo group behind the real CLI runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer

from grapharc.cli import main
from grapharc.cli.demo_commands import build_demo_app

ROOT_WITH_DEMO = """
import sys
import typer
import grapharc.cli.main as main
from grapharc.cli.demo_commands import build_demo_app

def build():
    app = typer.Typer(name="grapharc", no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode=None)
    app.add_typer(build_demo_app(), name="demo")
    app.command("version")(lambda: None)
    return app

main.build_app = build
sys.exit(main.run(sys.argv[1:]))
"""


def root_with_demo() -> typer.Typer:
    """A root app with the demo group mounted, as the ``grapharc`` command will have it."""
    app = typer.Typer(name="grapharc", no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode=None)
    app.add_typer(build_demo_app(), name="demo")
    app.command("version")(lambda: None)
    return app


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder, so the default ./.grapharc paths land there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHARC_MODEL", raising=False)
    return tmp_path


@pytest.fixture
def grapharc(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
             ) -> Callable[..., tuple[int, str, str]]:
    """``grapharc demo ...`` through the real entry point's error handling: (code, stdout, stderr)."""
    monkeypatch.setattr(main, "build_app", root_with_demo)

    def run(*args: str) -> tuple[int, str, str]:
        code = main.run(["demo", *args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture
def process(workdir: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``grapharc demo ...`` in a separate interpreter in ``workdir`` (what a user's shell runs)."""
    env = {key: value for key, value in os.environ.items() if key != "GRAPHARC_MODEL"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", ROOT_WITH_DEMO, "demo", *args], cwd=workdir,
                              capture_output=True, text=True, timeout=120, env=env)

    return run


@pytest.fixture
def events() -> Callable[..., list[dict[str, Any]]]:
    """Read a JSONL trace: the events whose fields equal the keyword arguments."""

    def read(path: Path, **match: Any) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        return [e for e in lines if all(e.get(key) == value for key, value in match.items())]

    return read
