"""Every command and option, fed hostile numbers, strings, paths and GRAPHARC_* values.

Whatever the input: the exit code is 0, 1 or 2; stderr holds no traceback and no "GraphARC
bug"; with --json stdout is exactly one JSON document (no NaN, no Infinity) saying "ok"; and a
command that refused (exit 2) changed no file. Commands are read from the Click tree, so a new
one is fuzzed without a change here. ``serve`` would start a server, so it only gets option
values its types refuse; ``models --check`` would ask real endpoints, so that flag is never set.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inputs import Workdir, command_line, environment, refused_options

from grapharc.cli.main import build_app
from grapharc.testing import plugin_host
from grapharc.testing.cli import CliResult, commands, run_cli

with plugin_host():
    COMMANDS = dict(commands(build_app()))
LONG_LIVED = {("serve",)}
HEAVY = {"plan", "run", "demo"}
"""Commands that run a graph: fewer examples, so the suite stays under two minutes."""


def examples(words: tuple[str, ...]) -> int:
    return int(os.environ.get("FUZZ_N", "0")) or (6 if words[0] in HEAVY else 12)


def strict(text: str) -> Any:
    """The one JSON document ``text`` holds; NaN and Infinity are refused, as JSON has neither."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in a JSON document")

    return json.loads(text, parse_constant=refuse)


def check(result: CliResult, argv: list[str], as_json: bool, before: dict[str, bytes],
          work: Workdir) -> None:
    shown = f"grapharc {argv!r}: exit {result.exit_code}\nstdout: {result.stdout[:2000]}\n" \
            f"stderr: {result.stderr[:2000]}"
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in result.stderr, shown
    assert "GraphARC bug" not in result.output, shown
    if as_json:
        document = strict(result.stdout)
        assert isinstance(document, dict) and isinstance(document.get("ok"), bool), shown
        assert document["ok"] is False or result.exit_code != 2, shown
    if result.exit_code == 2:
        assert work.snapshot() == before, shown


def fuzz(work: Workdir, argv: list[str], as_json: bool, env: dict[str, str]) -> None:
    before = work.snapshot()
    args = [*argv, "--json"] if as_json else argv
    with mock.patch.dict(os.environ, env):
        result = run_cli(args)
    check(result, args, as_json, before, work)


RUNNABLE = sorted(words for words in COMMANDS if words not in LONG_LIVED)


@pytest.mark.parametrize("words", RUNNABLE, ids=" ".join)
def test_any_command_line_exits_0_1_or_2_with_one_document_and_no_traceback(words, workdir):
    command = COMMANDS[words]

    @settings(max_examples=examples(words), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv=command_line(command), as_json=st.booleans(), env=environment())
    def run(argv: list[str], as_json: bool, env: dict[str, str]) -> None:
        fuzz(workdir, [*words, *argv], as_json, env)

    run()


@pytest.mark.parametrize("words", sorted(LONG_LIVED), ids=" ".join)
def test_a_long_lived_command_refuses_bad_options_before_it_starts(words, workdir):
    command = COMMANDS[words]

    @settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(argv=refused_options(command), as_json=st.booleans())
    def run(argv: list[str], as_json: bool) -> None:
        before = workdir.snapshot()
        args = [*words, *argv, *(["--json"] if as_json else [])]
        result = run_cli(args)
        assert result.exit_code == 2
        check(result, args, as_json, before, workdir)

    run()
