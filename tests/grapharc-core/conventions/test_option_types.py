"""Every numeric or path option of every command uses one of the shared option types."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
import typer

from grapharc.cli.main import build_app
from grapharc.cli.options import MaxTokens, ReadableFile, argument
from grapharc.testing import plugin_host
from grapharc.testing.cli import commands, run_cli, untyped_parameters

pytestmark = pytest.mark.smoke


def test_every_installed_command_is_walked():
    with plugin_host():
        walked = {" ".join(words) for words, _command in commands(build_app())}
    assert {"run", "trace", "serve", "session prune", "demo approval run", "demo stage3"} <= walked


def test_no_command_declares_a_raw_number_or_path():
    with plugin_host():
        assert untyped_parameters(build_app()) == []


def test_a_new_command_with_a_raw_float_int_or_path_is_caught():
    app = typer.Typer()

    @app.command("fresh")
    def fresh(lease: float = 1.0, count: int | None = None, out: Path = Path("x"),
              tokens: MaxTokens = None, name: str = "") -> None:
        """A command someone added without the shared types."""

    @app.command("other")
    def other(paths: Annotated[list[Path] | None, typer.Option("--path")] = None,
              source: Annotated[Path, argument("SOURCE", kind=ReadableFile("source"), help="x")]
              = Path("s")) -> None:
        """Another one."""

    assert untyped_parameters(app) == ["fresh --lease", "fresh --count", "fresh --out", "other --path"]


@pytest.mark.parametrize(("args", "words"), [
    (["plan", "g", "--max-tokens", "nan"], "'--max-tokens': must be an integer from 1 to"),
    (["run", "g.json", "--max-seconds", "inf"], "'--max-seconds': must be a number of seconds above 0"),
    (["run", "g.json", "--max-cost-usd", "1e308"], "'--max-cost-usd': must be a number of US dollars"),
    (["demo", "approval", "run", "--application", "A", "--lease", "-0"],
     "'--lease': must be a number of seconds at least 1 and at most 86400, got '-0'"),
    (["serve", "--port", "65536"], "'--port': must be an integer from 0 to 65535"),
    (["serve", "--drain-timeout", "nan"], "'--drain-timeout': must be a number of seconds at least 0"),
    (["serve", "--auth-file", "/proc/self"], "'/proc/self' is a directory, not an auth file"),
    (["trace", "/proc/self"], "'/proc/self' is a directory, not a trace file"),
    (["run", "/dev/null"], "'/dev/null' is a character device, not a graph file"),
    (["demo", "stage0", "--report-dir", "/proc/version"], "'/proc/version' is a file, not a folder"),
])
def test_a_bad_value_is_a_usage_error_naming_the_option_and_what_it_accepts(clean_workdir, args, words):
    with plugin_host():
        human = run_cli(args)
        document = run_cli([*args, "--json"])
    assert human.exit_code == 2 and human.stdout == ""
    assert human.stderr.startswith("error: Invalid value for ") and words in human.stderr
    assert document.exit_code == 2 and '"code": "UsageError"' in document.stdout
    assert words.replace("'", "") in document.stdout.replace("'", "")


def test_a_fifo_is_refused_without_waiting_for_a_writer(clean_workdir):
    import os

    os.mkfifo("pipe")
    for args in (["trace", "pipe"], ["run", "pipe"], ["plan", "g", "--policy", "pipe"]):
        result = run_cli(args)
        assert result.exit_code == 2 and "'pipe' is a FIFO (named pipe)" in result.stderr


@pytest.mark.parametrize("content", [b"\x00\x01binary", b'{"nodes": []}\n', b"notes\n"])
def test_a_trace_option_refuses_a_file_that_is_not_a_trace(clean_workdir, content):
    (clean_workdir / "other").write_bytes(content)
    for args in (["plan", "g", "--trace", "other"], ["demo", "stage1", "--trace", "other"]):
        result = run_cli(args)
        assert result.exit_code == 2 and "'other' is not a JSONL trace" in result.stderr
    assert (clean_workdir / "other").read_bytes() == content


def test_reading_session_commands_create_no_store_in_an_empty_folder(clean_workdir):
    (clean_workdir / "empty").mkdir()
    for args in (["session", "list"], ["session", "status", "t"], ["demo", "approval", "recover", "t"]):
        assert run_cli([*args, "--dir", "empty"]).exit_code in (0, 2)
    assert list((clean_workdir / "empty").iterdir()) == []
