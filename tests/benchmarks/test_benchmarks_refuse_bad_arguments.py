"""Every benchmark takes ``--json`` and refuses a bad value of every option before any work: exit
status 2, the option named, no traceback, and one JSON document naming it under ``--json``; and
an environment that fails a script (a PostgreSQL that does not answer) ends it in one line, no
traceback either.

The sweep runs in this process: each script's ``main`` is loaded once and called with the
arguments in ``sys.argv``, so the parse error ends it before any work."""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from benchmark_runs import BENCHMARKS, run_benchmark

sys.path.insert(0, str(BENCHMARKS))
from _arguments import (
    Count,
    Counts,
    EmbedderSpec,
    FolderOrNone,
    Positive,
    PostgresConninfo,
    ReadableFile,
    ServerURL,
    StoreURI,
)

SCRIPTS = sorted(path for path in BENCHMARKS.glob("*.py") if "checked_main(main)" in path.read_text())
NOWHERE = "postgresql://postgres@127.0.0.1:1/postgres"
"""A PostgreSQL URI no server answers at (port 1 refuses connections)."""

NUMBERS = ["nan", "inf", "1e400", "x", ""]


def refused_values(kind: Any, folder: Path, plain_file: Path) -> list[str]:
    """Values of an option of type ``kind`` that the option must refuse."""
    if isinstance(kind, Count | Counts):
        values = [str(kind.minimum - 1), "-1", str(10**30), "9" * 5000, "1.5", *NUMBERS]
        return [*values, "1,x"] if isinstance(kind, Counts) else values
    if isinstance(kind, Positive):
        return ["0", "-1", "-inf", str(10**30), *NUMBERS]
    if isinstance(kind, ReadableFile):
        return ["0", str(folder), *([str(plain_file)] if kind.executable else [])]
    if isinstance(kind, FolderOrNone):
        return ["0", str(plain_file)]
    if isinstance(kind, PostgresConninfo | StoreURI):
        return ["0", "-1", "nan", ""]
    if isinstance(kind, EmbedderSpec):
        return ["0", "hashing:0", "hashing:nan", "nowhere:1"]
    if isinstance(kind, ServerURL):
        return ["0", "ftp://example.org", "http://", "http://host:99999"]
    raise AssertionError(f"{kind!r} is none of the option types benchmarks/_arguments.py checks")


class Parsed(Exception):
    """Raised in place of parsing, carrying the parser a script's ``main`` built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def script_parser(main: Callable[[], object], monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser ``main`` builds, caught as it starts parsing."""
    def caught(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise Parsed(self)

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_known_args", caught)
        try:
            main()
        except Parsed as parsed:
            return parsed.parser
    raise AssertionError("main() never parsed its arguments")


def cases(parser: argparse.ArgumentParser, folder: Path, plain_file: Path) -> Iterator[tuple[str, str]]:
    """Each option of ``parser`` that takes a value, with each value it must refuse."""
    for action in parser._actions:
        if not action.option_strings or action.nargs == 0:
            continue
        option = action.option_strings[0]
        if action.choices is not None:
            yield option, "x"
        else:
            for value in refused_values(action.type, folder, plain_file):
                yield option, value


def required(parser: argparse.ArgumentParser) -> list[str]:
    """A valid value for each required option (its first choice)."""
    return [part for action in parser._actions if action.required and action.choices
            for part in (action.option_strings[0], str(next(iter(action.choices))))]


def called(main: Callable[[], object], script: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    """``main`` run with ``argv`` as its command line: its exit status, stdout and stderr."""
    monkeypatch.setattr(sys, "argv", [script.name, *argv])
    try:
        main()
    except SystemExit as exit_:
        status: object = exit_.code
    else:
        status = "returned"
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_every_option_refuses_bad_values_with_status_2(script: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    main = runpy.run_path(str(script), run_name=f"benchmark_{script.stem}")["main"]
    parser = script_parser(main, monkeypatch)
    plain_file = tmp_path / "plain.txt"
    plain_file.write_text("not a program\n")
    assert "--json" in parser._option_string_actions, f"{script.name} has no --json"
    swept = list(cases(parser, tmp_path, plain_file))
    for option, value in swept:
        argv = [*required(parser), f"{option}={value}"]
        status, out, err = called(main, script, argv, monkeypatch, capsys)
        assert (status, out) == (2, ""), f"{script.name} {option}={value!r}: {status} {out}{err}"
        assert f"argument {option}" in err and "Traceback" not in err, err
        assert len(err.splitlines()[-1]) < 300, f"{script.name} {option}: a message too long to read"
        status, out, err = called(main, script, [*argv, "--json"], monkeypatch, capsys)
        assert (status, err) == (2, ""), f"{script.name} {option}={value!r} --json: {status} {err}"
        assert f"argument {option}" in json.loads(out)["error"], out
    assert swept or not [action for action in parser._actions if action.option_strings and action.nargs != 0]


def test_a_usage_error_ends_the_process_with_status_2_and_no_traceback() -> None:
    done = run_benchmark("claim_add.py", "--rounds", "0")
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert "argument --rounds: '0' is not from 1 to" in done.stderr and "Traceback" not in done.stderr

    done = run_benchmark("claim_add.py", "--rounds", "nan", "--json")
    assert done.returncode == 2 and done.stderr == "", done.stderr
    assert "argument --rounds" in json.loads(done.stdout)["error"]


def test_a_postgresql_that_does_not_answer_ends_the_process_in_one_line() -> None:
    done = run_benchmark("store_search.py", "--quick", "--postgres", NOWHERE)
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("store_search.py: no figures: the environment failed: ")
    assert "127.0.0.1" in done.stderr and "port 1" in done.stderr
