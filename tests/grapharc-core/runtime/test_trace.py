"""The JSONL trace writer: the event contract, crash safety, and values JSON cannot hold."""

from __future__ import annotations

import datetime
import enum
import json
import math
import os
import subprocess
import sys
import threading
import uuid
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from grapharc.runtime.deadline import NodeTimeoutError
from grapharc.trace import encoding
from grapharc.trace.encoding import MAX_STRING_CHARS, TRUNCATION_MARKER
from grapharc.trace.errors import TraceClosedError, TraceFieldError
from grapharc.trace.writer import TraceWriter

IDENTITY = ("run-1", "thread-1", 1, "incident", "investigate", 3)
START_FIELDS = {"phase", "run_id", "thread_id", "attempt", "graph", "node", "step", "ts"}


def read_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def write_one(path: Path, value: Any) -> Any:
    """Write ``value`` as a run-level event's payload and read back what landed on disk."""
    with TraceWriter(path) as writer:
        writer.emit(dict(phase="probe", value=value))
    return read_events(path)[-1]["value"]


class Finding(BaseModel):
    title: str
    seen: datetime.date


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


class Label(str):
    pass


class Unrepresentable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def test_start_end_and_error_events_carry_exactly_the_contract_fields(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.start(*IDENTITY)
        writer.end(*IDENTITY, state_delta={"x": 1}, duration_ms=1.5, tokens=8, cost_usd=None)
        writer.error(*IDENTITY, duration_ms=2.0, exception=ValueError("bad value"))
    start, end, error = read_events(path)
    assert set(start) == START_FIELDS
    assert set(end) == START_FIELDS | {"state_delta", "duration_ms", "tokens", "cost_usd"}
    assert set(error) == START_FIELDS | {"duration_ms", "exception"}
    assert [start["phase"], end["phase"], error["phase"]] == ["start", "end", "error"]
    assert (start["run_id"], start["thread_id"], start["attempt"]) == ("run-1", "thread-1", 1)
    assert (start["graph"], start["node"], start["step"]) == ("incident", "investigate", 3)
    assert (end["state_delta"], end["duration_ms"], end["tokens"], end["cost_usd"]) == (
        {"x": 1},
        1.5,
        8,
        None,
    )
    assert error["exception"] == {"type": "ValueError", "message": "bad value"}
    assert isinstance(start["ts"], float) and start["ts"] > 1_600_000_000


def test_durations_are_written_in_whole_nanoseconds_without_float_noise(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.end(*IDENTITY, state_delta={}, duration_ms=0.0594809998801793, tokens=0, cost_usd=None)
        writer.error(*IDENTITY, duration_ms=22.596513310678798, exception=ValueError("bad"))
        writer.paused("interrupt", *IDENTITY, duration_ms=1.0000004999)
    lines = path.read_text("utf-8").splitlines()
    assert [event["duration_ms"] for event in map(json.loads, lines)] == [0.059481, 22.596513, 1.0]
    assert '"duration_ms":0.059481,' in lines[0]


def test_an_exception_outside_builtins_is_named_with_its_module(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.error(*IDENTITY, duration_ms=1.0, exception=NodeTimeoutError("n", 2.0))
    (error,) = read_events(path)
    assert error["exception"]["type"] == "grapharc.runtime.deadline.NodeTimeoutError"


def test_extra_fields_are_merged_only_when_given(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.start(*IDENTITY, extra={"tenant": "acme", "copy": "shared"})
        writer.start(*IDENTITY)
    with_extra, without = read_events(path)
    assert set(with_extra) == START_FIELDS | {"tenant", "copy"}
    assert with_extra["tenant"] == "acme"
    assert set(without) == START_FIELDS


def test_an_extra_field_cannot_overwrite_a_contract_field(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer, pytest.raises(TraceFieldError, match="node"):
        writer.end(*IDENTITY, state_delta={}, duration_ms=1, tokens=0, cost_usd=0.0, extra={"node": "x"})
    assert path.read_text() == ""


def test_run_level_events_carry_their_phase_fields_and_a_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.emit(dict(phase="run_start", run_id="run-1", graph="incident"))
        writer.emit(dict(phase="run_end", run_id="run-1", ts=123.0))
        with pytest.raises(TraceFieldError, match="phase"):
            writer.emit(dict(run_id="run-1", status="completed"))
    run_start, run_end = read_events(path)
    assert set(run_start) == {"phase", "run_id", "graph", "ts"}
    assert run_start["phase"] == "run_start"
    assert run_end["ts"] == 123.0


def test_a_torn_last_line_is_closed_off_on_reopen_and_earlier_events_stay_intact(
    tmp_path: Path,
) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.emit(dict(phase="one", n=1))
        writer.emit(dict(phase="two", n=2))
    before = path.read_text("utf-8").splitlines()
    with path.open("a", encoding="utf-8") as crashed:
        crashed.write('{"phase":"start","run_id":"r')  # the process died mid-write
    with TraceWriter(path) as writer:
        writer.emit(dict(phase="three", n=3))
    lines = path.read_text("utf-8").splitlines()
    assert lines[:2] == before
    assert lines[2] == '{"phase":"start","run_id":"r'
    assert json.loads(lines[3])["phase"] == "three"
    assert len(lines) == 4


def test_reopening_a_clean_file_adds_no_blank_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    for n in range(3):
        with TraceWriter(path) as writer:
            writer.emit(dict(phase="e", n=n))
    assert [event["n"] for event in read_events(path)] == [0, 1, 2]


def test_parent_directories_are_created(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "2026" / "trace.jsonl"
    with TraceWriter(path) as writer:
        writer.emit({"phase": "e"})
    assert len(read_events(path)) == 1


def test_strings_over_2000_characters_are_truncated_with_the_marker(tmp_path: Path) -> None:
    long = "x" * (MAX_STRING_CHARS + 500)
    exact = "y" * MAX_STRING_CHARS
    value = write_one(tmp_path / "t.jsonl", {"answer": long, "exact": exact, "nested": [[long]]})
    assert value["answer"] == "x" * MAX_STRING_CHARS + TRUNCATION_MARKER
    assert value["nested"] == [["x" * MAX_STRING_CHARS + TRUNCATION_MARKER]]
    assert value["exact"] == exact


def test_strings_of_escaped_characters_over_2000_characters_are_truncated_too(tmp_path: Path) -> None:
    quotes, backslashes, mixed = '"' * (MAX_STRING_CHARS + 1), "\\" * (MAX_STRING_CHARS + 1), 'a\\"' * 700
    value = write_one(tmp_path / "t.jsonl", {"quotes": quotes, "backslashes": backslashes, "mixed": mixed})
    assert value["quotes"] == '"' * MAX_STRING_CHARS + TRUNCATION_MARKER
    assert value["backslashes"] == "\\" * MAX_STRING_CHARS + TRUNCATION_MARKER
    assert value["mixed"] == mixed[:MAX_STRING_CHARS] + TRUNCATION_MARKER


def test_a_long_line_of_short_strings_is_written_without_the_cleaning_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[Any] = []
    walk = encoding._clean
    monkeypatch.setattr(encoding, "_clean", lambda value, *rest: walks.append(value) or walk(value, *rest))
    messages = [{"content": f'answer "{n}"', "tool_call_id": f"c{n}"} for n in range(500)]
    assert write_one(tmp_path / "short.jsonl", {"messages": messages}) == {"messages": messages}
    assert walks == []  # a tool step's end: a long line, no string that needs cutting
    assert write_one(tmp_path / "long.jsonl", ["x" * (MAX_STRING_CHARS + 1)])[0].endswith(TRUNCATION_MARKER)
    assert walks != []


def test_values_json_cannot_hold_are_written_as_their_repr(tmp_path: Path) -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    value = write_one(
        tmp_path / "t.jsonl",
        {
            "set": {1},
            "bytes": b"\x00",
            "object": Unrepresentable(),
            "when": datetime.datetime(2026, 1, 2, 3, 4, 5),
            "cycle": cycle,
            "huge": "z" * 10_000 + repr(object),
        },
    )
    assert value["set"] == {"__repr__": "{1}"}
    assert value["bytes"] == {"__repr__": "b'\\x00'"}
    assert value["object"] == {"__repr__": "<unrepresentable Unrepresentable>"}
    assert value["when"] == {"__repr__": "datetime.datetime(2026, 1, 2, 3, 4, 5)"}
    assert "[...]" in json.dumps(value["cycle"])
    assert len(value["huge"]) == MAX_STRING_CHARS + len(TRUNCATION_MARKER)


def test_pydantic_models_enums_uuids_and_tuples_are_written_as_json(tmp_path: Path) -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    point = namedtuple("point", "x y")(1, 2)
    value = write_one(
        tmp_path / "t.jsonl",
        {
            "finding": Finding(title="disk full", seen=datetime.date(2026, 8, 5)),
            "colour": Colour.RED,
            "id": ident,
            "pair": (1, "a"),
            "point": point,
        },
    )
    assert value == {
        "finding": {"title": "disk full", "seen": "2026-08-05"},
        "colour": "red",
        "id": str(ident),
        "pair": [1, "a"],
        "point": [1, 2],
    }


def test_non_finite_floats_and_non_string_keys_are_written_as_valid_json(tmp_path: Path) -> None:
    value = write_one(
        tmp_path / "t.jsonl",
        {"nan": math.nan, "inf": -math.inf, "keys": {7: "a", None: "b", True: "c", (1, 2): "d"}},
    )
    assert value == {
        "nan": None,
        "inf": None,
        "keys": {"7": "a", "null": "b", "true": "c", "(1, 2)": "d"},
    }


def test_lone_surrogates_do_not_fail_the_write(tmp_path: Path) -> None:
    assert write_one(tmp_path / "t.jsonl", "bad \ud800 text") == "bad \\ud800 text"


@pytest.mark.skipif(encoding.orjson is None, reason="orjson is not installed")
def test_orjson_and_stdlib_json_write_the_same_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = {
        "model": Finding(title="t" * 3000, seen=datetime.date(2026, 1, 1)),
        "colour": Colour.RED,
        "big": 2**70,
        "nan": math.nan,
        "keys": {1: 1, 2.5: 2, (1,): 3},
        "when": datetime.time(1, 2),
        "text": "é" * 2500,
        "nested": {"a": [1, 2.5, None, True, ("x", {4})]},
        "subclasses": [Ratio(0.5), Colour.RED, Level.HIGH, Label("l")],
    }
    fast = write_one(tmp_path / "orjson.jsonl", value)
    monkeypatch.setattr(encoding, "_dumps", encoding._dumps_stdlib)
    assert write_one(tmp_path / "stdlib.jsonl", value) == fast


def test_threads_sharing_one_writer_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceWriter(path) as writer:

        def work(worker: int) -> None:
            for step in range(300):
                writer.emit(dict(phase="e", worker=worker, step=step, pad="p" * 1500))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    events = read_events(path)
    assert len(events) == 1200
    assert sorted((e["worker"], e["step"]) for e in events) == [(w, s) for w in range(4) for s in range(300)]


APPENDER = """
import sys
from grapharc.trace.writer import TraceWriter
with TraceWriter(sys.argv[1]) as writer:
    for step in range(1000):
        writer.emit(dict(phase="e", writer=sys.argv[2], step=step, pad=["p" * 1900] * 3))
"""


def test_two_processes_appending_1000_events_each_produce_2000_parseable_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.jsonl"
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), name]) for name in ("a", "b")]
    assert [process.wait(timeout=120) for process in writers] == [0, 0]
    events = read_events(path)  # each line is > 5 KB, past PIPE_BUF: atomicity is O_APPEND's
    assert len(events) == 2000
    for name in ("a", "b"):
        assert [e["step"] for e in events if e["writer"] == name] == list(range(1000))


def test_writing_after_close_is_refused_and_closing_twice_is_harmless(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "trace.jsonl")
    writer.close()
    writer.close()
    with pytest.raises(TraceClosedError, match="closed"):
        writer.emit({"phase": "late"})


@pytest.mark.parametrize("make", ["directory", "fifo", "under_a_file"])
def test_a_trace_path_that_is_not_a_writable_regular_file_is_refused(tmp_path: Path, make: str) -> None:
    from grapharc.trace.errors import TraceOpenError

    target = tmp_path / "trace"
    if make == "directory":
        target.mkdir()
    elif make == "fifo":
        os.mkfifo(target)
    else:
        target.write_text("a file")
        target = target / "t.jsonl"
    with pytest.raises(TraceOpenError, match=f"cannot write the trace to {target}"):
        TraceWriter(target)


def test_checking_a_trace_path_leaves_no_file_or_folder_and_refuses_what_cannot_be_opened(
        tmp_path: Path) -> None:
    from grapharc.trace.errors import TraceOpenError
    from grapharc.trace.sinks import check_trace_writable

    check_trace_writable(tmp_path / "new" / "deeper" / "t.jsonl")
    (tmp_path / "kept.jsonl").write_bytes(b'{"phase":"x"}\n')
    check_trace_writable(tmp_path / "kept.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl"]
    assert (tmp_path / "kept.jsonl").read_bytes() == b'{"phase":"x"}\n'
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(TraceOpenError, match="not a regular file"):
        check_trace_writable(tmp_path / "fifo")


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs Linux /proc")
def test_a_trace_the_kernel_refuses_to_append_to_fails_with_the_librarys_error() -> None:
    from grapharc.trace.errors import TraceOpenError

    with TraceWriter("/proc/version") as writer, pytest.raises(TraceOpenError, match="/proc/version"):
        writer.emit({"phase": "run_start"})
