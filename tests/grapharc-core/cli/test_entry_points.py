"""How a user starts GraphARC: ``grapharc -h``, ``grapharc --version``, ``python -m grapharc``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from grapharc import __version__
from grapharc.cli.main import build_app

SCRIPT = Path(sys.executable).with_name("grapharc")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    return subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


def command_paths(command: typer.main.TyperGroup | typer.main.TyperCommand,
                  path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command and group under ``command``, as the words that reach it (a command declared
    lazily is built by the look-up, as when it runs)."""
    yield path
    if isinstance(command, typer.core.TyperGroup):
        context = typer.Context(command)
        for name in command.list_commands(context):
            yield from command_paths(command.get_command(context, name), (*path, name))


def test_dash_h_prints_the_same_help_as_double_dash_help():
    short, long = run(str(SCRIPT), "-h"), run(str(SCRIPT), "--help")
    assert short.returncode == long.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "-h, --help" in short.stdout and "--version" in short.stdout


def test_every_command_and_group_takes_dash_h():
    paths = list(command_paths(typer.main.get_command(build_app())))
    assert ("session", "prune") in paths and ("demo", "approval", "run") in paths
    runner = CliRunner()
    for path in paths:
        short = runner.invoke(build_app(), [*path, "-h"])
        assert short.exit_code == 0, (path, short.output)
        assert short.output == runner.invoke(build_app(), [*path, "--help"]).output, path
        assert short.output.startswith(f"Usage: {' '.join(('grapharc', *path))}".rstrip())


def test_version_flag_prints_the_version():
    result = run(str(SCRIPT), "--version")
    assert result.returncode == 0 and result.stdout == f"grapharc {__version__}\n", result.stderr


def test_version_flag_with_json_prints_one_document():
    result = run(str(SCRIPT), "--version", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["grapharc"] == __version__
    assert document["distributions"]["grapharc-core"] == __version__


def test_json_before_a_command_is_refused_as_one_line_not_ignored():
    result = run(str(SCRIPT), "--json", "plugins")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "MisplacedOptionError"


def test_the_root_help_lists_no_json_switch_it_would_refuse():
    shown = run(str(SCRIPT), "--help").stdout
    options = shown.split("Options:", 1)[1].split("Commands:", 1)[0]
    assert "--json" not in options.replace("with --json", "") and "--version" in options


@pytest.mark.parametrize("args", [["--version"], ["plugins", "--json"]])
def test_python_dash_m_grapharc_is_the_grapharc_command(args):
    module, script = run(sys.executable, "-m", "grapharc", *args), run(str(SCRIPT), *args)
    assert module.returncode == script.returncode == 0, module.stderr
    assert module.stdout == script.stdout


def test_python_dash_m_grapharc_without_arguments_shows_help_and_exits_2():
    result = run(sys.executable, "-m", "grapharc")
    assert result.returncode == 2 and "Usage: grapharc" in result.stderr and not result.stdout
