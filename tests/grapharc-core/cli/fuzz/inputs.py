"""What the CLI fuzz suite feeds every option: hostile numbers, strings, paths and env values.

Each parameter of each command (read from the Click tree, so a new command is covered) gets a
strategy by kind. ``Workdir`` lays out the files the path strategy names: real state (a
session folder holding a paused thread, a trace) next to a FIFO, a binary file and the rest.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

from hypothesis import strategies as st

from grapharc.cli.options import Folder, OptionType, Ranged, ReadableFile, WritableFile

NUMBERS = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "-0", "-0.0", "0", "1e308", "-1e308",
           "1e-320", str(2**70), str(-(2**70)), str(2**64), "-1", "1", "2", "0.3", "1_000", "0x10",
           "", " ", "1e", "½", "٣", "9" * 60, "1" * 5000]
STRINGS = ["", " ", "-", "--json", "\x1b[2J\x1b[31mFAKE OUTPUT", "a\rb\nc", "\x07\x08\x7f", "x" * 10_000,
           "é漢字🙂", "\u202eevil", "..", "../../etc/passwd", "sys:exit", "os:system", "builtins:input",
           "plugins", "nope:nope", "grapharc:nothing", "mock/", "nobackend/x", "r1", "t1"]
ENV_VALUES = ["nan", "-1", "1e308", "", " ", "\x1b[31m", "x" * 10_000, "/proc/version", "/dev/null",
              "fifo", "dir", "1", "0", "yes"]
ENV_NAMES = ["GRAPHARC_MAX_TOKENS", "GRAPHARC_MAX_SECONDS", "GRAPHARC_MAX_COST_USD",
             "GRAPHARC_MAX_ROUNDS", "GRAPHARC_MAX_ITERATIONS", "GRAPHARC_MAX_CONCURRENCY",
             "GRAPHARC_MAX_DEPTH", "GRAPHARC_TRACE", "GRAPHARC_SESSIONS", "GRAPHARC_POLICY",
             "GRAPHARC_TENANT", "GRAPHARC_REGISTRY", "GRAPHARC_SOMETHING_ELSE"]
SMALL = ["1", "2", "0.3"]
"""The in-range values a long-running option may take (rounds, a worker's timeout)."""
SLOW = {"--max-rounds", "--worker-timeout", "--max-attempts"}
NEVER = {"--check"}
"""``models --check`` asks real endpoints whether they answer: no network in tests."""
NEVER_VALUES = {"kill"}
"""``demo stage0 --inject-failure kill`` SIGKILLs its own process (a crash, on purpose), which
in-process is the test run itself; the demo's own tests run it in a child process."""


@dataclass(frozen=True)
class Workdir:
    """The files a fuzzed path may name, laid out in ``root`` (the working directory)."""

    root: Path

    PATHS = ("missing.json", "missing/deeper/file", "dir", "blob.bin", "fifo", "empty", "graph.json",
             "policy.toml", "t.jsonl", "sessions", "sessions/sessions.db", "/proc/version",
             "/proc/self/status", "/proc", "/dev/null", "/sys/kernel/nothing", "-", "",
             "x" * 5000, "dir/" + "y" * 300, "nul\x00byte")

    def build(self, graph: str, policy: str, trace: str) -> None:
        """The odd files next to the real state (a FIFO cannot be copied, so it is made here)."""
        (self.root / "dir").mkdir()
        (self.root / "blob.bin").write_bytes(bytes(range(256)) * 4)
        os.mkfifo(self.root / "fifo")
        (self.root / "empty").write_bytes(b"")
        (self.root / "graph.json").write_text(graph)
        (self.root / "policy.toml").write_text(policy)
        (self.root / "t.jsonl").write_text(trace)

    def snapshot(self) -> dict[str, bytes]:
        """Every regular file under the working directory and its content (see ``_content``);
        a database's -wal and -shm files are how SQLite reads, not content."""
        return {str(path.relative_to(self.root)): _content(path) for path in sorted(self.root.rglob("*"))
                if path.is_file() and not path.is_symlink() and not path.name.endswith(("-wal", "-shm"))}


def _content(path: Path) -> bytes:
    """``path``'s bytes, or for a SQLite database (whatever its name: ``--dir missing.json``
    makes one) the SQL that rebuilds it, since a WAL checkpoint rewrites its pages unchanged."""
    raw = path.read_bytes()
    if not raw.startswith(b"SQLite format 3"):
        return raw
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return "\n".join(db.iterdump()).encode()


def _numbers(param: Any) -> st.SearchStrategy[str]:
    if param.opts[0] in SLOW:
        return st.sampled_from([*NUMBERS, *SMALL])
    return st.one_of(st.sampled_from(NUMBERS), st.integers(-(2**80), 2**80).map(str),
                     st.floats().map(repr))


def _strings() -> st.SearchStrategy[str]:
    # no ':' or '/' in generated text: a random registry or model spec must never name a real one
    text = st.text(st.characters(exclude_characters=":/\x00", codec="utf-8"), max_size=40)
    return st.one_of(st.sampled_from(STRINGS), text)


def value_strategy(param: Any, plausible: bool = False) -> st.SearchStrategy[str] | None:
    """Text to give ``param`` on the command line (None: a flag, which takes none).

    ``plausible`` values are ones a user would type (so a run gets past its options); the
    others are hostile.
    """
    info = param.type_descriptor.parameter_info
    annotation = param.type_descriptor.annotation
    kind: OptionType | None = info.parser if isinstance(info.parser, OptionType) else None
    if getattr(param, "is_flag", False):
        return None
    if isinstance(kind, Ranged) or annotation in (int, float):
        return st.sampled_from(SMALL) if plausible else _numbers(param)
    if isinstance(kind, ReadableFile | WritableFile | Folder) or (
            isinstance(annotation, type) and issubclass(annotation, PurePath)):
        return st.sampled_from(_plausible_paths(kind) if plausible else Workdir.PATHS)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        members = st.sampled_from([str(member.value) for member in annotation
                                   if str(member.value) not in NEVER_VALUES])
        return members if plausible else st.one_of(members, _strings())
    return st.sampled_from(WORDS) if plausible else _strings()


WORDS = ["r1", "t1", "LN-7310", "LN-2204", "approved", "rejected", "goal", "tenant", "paused", "1d"]
"""Strings a user would type for an id, a status, a decision, a goal or a duration."""


def _plausible_paths(kind: OptionType | None) -> list[str]:
    if isinstance(kind, Folder):
        return ["sessions", "new-folder"]
    if isinstance(kind, WritableFile):
        return ["out.jsonl", "t.jsonl", "new/folder/file.db"]
    return ["graph.json", "t.jsonl", "policy.toml"]


@st.composite
def command_line(draw: st.DrawFn, command: Any) -> list[str]:
    """An argv for ``command``: every required parameter and a random subset of the others.

    An example is one of: every value plausible, one value hostile, or every value either.
    """
    params = [p for p in command.params if p.opts[0] not in NEVER and p.opts[0] != "--json"]
    chosen = [p for p in params if p.param_type_name == "argument" or p.required or draw(st.booleans())]
    mode = draw(st.sampled_from(["plausible", "one hostile", "wild"]))
    hostile = draw(st.sampled_from(chosen)) if chosen and mode == "one hostile" else None
    argv: list[str] = []
    for param in chosen:
        plausible = mode == "plausible" or (mode == "one hostile" and param is not hostile) or (
            mode == "wild" and draw(st.booleans()))
        strategy = value_strategy(param, plausible)
        if param.param_type_name == "argument":
            argv.append(draw(strategy if strategy is not None else _strings()))
        else:
            argv += [param.opts[0]] if strategy is None else [param.opts[0], draw(strategy)]
    return argv


def refused_options(command: Any) -> st.SearchStrategy[list[str]]:
    """Options of ``command`` each given a value its type refuses (at least one), nothing else.

    For a command that would otherwise start something long-lived (``serve``).
    """
    pairs = [(param.opts[0], value) for param in command.params
             if isinstance(param.type_descriptor.parameter_info.parser, OptionType)
             for value in [*NUMBERS, *Workdir.PATHS] if _refused(param, value)]
    return st.lists(st.sampled_from(pairs), min_size=1, max_size=3).map(
        lambda chosen: [word for pair in chosen for word in pair])


def _refused(param: Any, value: str) -> bool:
    kind = param.type_descriptor.parameter_info.parser
    try:
        kind(value)
    except Exception:
        return True
    return False


def environment() -> st.SearchStrategy[dict[str, str]]:
    """A few ``GRAPHARC_*`` settings with junk in them (or none)."""
    return st.dictionaries(st.sampled_from(ENV_NAMES), st.sampled_from(ENV_VALUES), max_size=2)
