"""The one streaming reader: filters, torn lines, malformed lines, unreadable paths, both decoders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.observe.errors import TraceFormatError, TraceUnreadableError
from grapharc.trace.reader import TraceReader, read_events
from grapharc.trace.torn import is_torn
from grapharc.trace.writer import TraceWriter

EVENT = {"phase": "end", "run_id": "r", "node": "n", "step": 1, "state_delta": {"text": "héllo \"quoted\""},
         "duration_ms": 1.5, "tokens": 12, "cost_usd": None, "ok": True, "neg": -3.25e-4}


def lines(*events: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_events_stream_in_file_order_and_filter_by_run_thread_and_attempt(builder):
    builder.node("a", "x", 1, thread="t1").node("b", "y", 1, thread="t2")
    builder.node("a", "z", 2, thread="t1", attempt=2)
    path = builder.write()
    assert [e["node"] for e in read_events(path)] == ["x", "x", "y", "y", "z", "z"]
    assert {e["run_id"] for e in read_events(path, run_id="b")} == {"b"}
    assert [e["node"] for e in read_events(path, thread_id="t1", attempt=2)] == ["z", "z"]
    assert list(read_events(path, run_id="nope")) == []


def test_reading_is_lazy_so_the_first_event_arrives_before_later_lines_are_parsed(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + "this line is corrupt\n")
    events = read_events(path)
    assert next(events) == EVENT
    with pytest.raises(TraceFormatError):
        next(events)


def test_a_torn_last_line_is_left_unread(tmp_path):
    path = tmp_path / "t.jsonl"
    whole = json.dumps(EVENT)
    path.write_text(lines(EVENT) + whole[:25])
    reader = TraceReader(path)
    assert list(reader) == [EVENT]
    assert reader.pending == whole[:25].encode() and reader.torn_lines == []


def test_an_unterminated_last_line_that_is_a_whole_object_is_read(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + json.dumps(EVENT))
    assert list(read_events(path)) == [EVENT, EVENT]


def test_a_line_being_appended_is_read_once_it_is_complete(tmp_path):
    path = tmp_path / "t.jsonl"
    whole = json.dumps({**EVENT, "node": "late"}) + "\n"
    path.write_text(lines(EVENT) + whole[:40])
    assert [e["node"] for e in read_events(path)] == ["n"]
    with open(path, "a") as handle:
        handle.write(whole[40:])
    assert [e["node"] for e in read_events(path)] == ["n", "late"]


def test_a_malformed_line_elsewhere_names_the_file_and_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + '{"phase": "end", "oops"}\n' + lines(EVENT))
    with pytest.raises(TraceFormatError) as caught:
        list(read_events(path))
    assert caught.value.line == 2
    assert str(caught.value).startswith(f"{path}:2: ")


@pytest.mark.parametrize("bad", ["[1, 2]", '"text"', '{"run_id": "r"}', "null"])
def test_json_that_is_not_an_event_object_is_rejected_with_its_line(tmp_path, bad):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + bad + "\n")
    with pytest.raises(TraceFormatError, match=r":2: is not a JSON object with a 'phase' field"):
        list(read_events(path))


def test_an_unterminated_last_line_that_is_no_json_prefix_is_rejected(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + "garbage")
    with pytest.raises(TraceFormatError, match=":2: is not valid JSON"):
        list(read_events(path))


def test_a_line_torn_by_a_crash_and_closed_by_the_next_writer_is_skipped_and_reported(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + json.dumps(EVENT)[:30])  # a writer died mid-line
    with TraceWriter(path) as writer:  # the kernel's writer closes the torn line off
        writer.emit(dict(phase="run_end", run_id="r", status="completed"))
    reader = TraceReader(path)
    assert [e["phase"] for e in reader] == ["end", "run_end"]
    assert reader.torn_lines == [2]
    assert reader.warnings() == [f"{path}:2: skipped a line torn by a crashed writer"]


def test_blank_lines_hold_no_event_and_are_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + "\n   \n" + lines(EVENT))
    assert len(list(read_events(path))) == 2


def test_a_missing_path_a_directory_and_a_binary_file_are_unreadable(tmp_path):
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    for path, words in ((tmp_path / "absent.jsonl", "no such trace file"),
                        (tmp_path, "is a directory"), (binary, "binary data")):
        with pytest.raises(TraceUnreadableError, match=words):
            list(read_events(path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_is_unreadable(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT))
    path.chmod(0)
    with pytest.raises(TraceUnreadableError, match="permission denied"):
        list(read_events(path))


def test_the_stdlib_fallback_reads_the_same_events_when_orjson_is_absent(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT, {**EVENT, "node": "m"}) + json.dumps(EVENT)[:20])
    probe = ("import sys, json\nsys.modules['orjson'] = None\n"
             "from grapharc.trace import codec\nfrom grapharc.trace.reader import read_events\n"
             f"print(codec.BACKEND, json.dumps(list(read_events({str(path)!r}))))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    backend, events = result.stdout.split(" ", 1)
    assert backend == "stdlib"
    assert json.loads(events) == list(read_events(path))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) |
    st.text(max_size=12), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=5), inner, max_size=3), max_leaves=8), max_size=5), st.booleans(), st.data())
def test_every_proper_prefix_of_an_encoded_event_counts_as_torn(value, compact, data):
    separators = (",", ":") if compact else (", ", ": ")
    line = json.dumps({"phase": "x", **value}, ensure_ascii=not compact, separators=separators).encode()
    cut = data.draw(st.integers(min_value=1, max_value=len(line) - 1))
    assert is_torn(line[:cut])
    assert is_torn(line[:cut] + b"\n")


@pytest.mark.parametrize("line", [b'{"a": 1,,}', b'{"a": 1}x', b"garbage", b'{"a": xyz',
                                  b'{"phase":"start"}{"phase":"end"', b'{"a": 1.2.3', b'{"a": truex'])
def test_corruption_is_never_mistaken_for_a_torn_line(line):
    assert not is_torn(line)


def test_the_reader_knows_the_kernels_truncation_marker():
    from grapharc.observe.fold import TRUNCATION_MARKER
    from grapharc.trace import encoding

    assert encoding.TRUNCATION_MARKER == TRUNCATION_MARKER


def test_a_path_object_and_a_string_path_read_alike(builder):
    path = builder.node("a", "x", 1).write()
    assert list(read_events(str(path))) == list(read_events(Path(path)))


def test_a_run_written_in_an_unknown_format_version_is_refused_with_one_line(tmp_path):
    from typer.testing import CliRunner

    from grapharc.cli.main import build_app
    from grapharc.observe.errors import TraceVersionError

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"phase": "run_start", "run_id": "r", "schema_version": 99}) + "\n")
    refusal = ":1: written in trace format version 99; this GraphARC reads 1"
    with pytest.raises(TraceVersionError, match=refusal):
        list(read_events(path))
    result = CliRunner().invoke(build_app(), ["metrics", str(path)])
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line.startswith("error")] == [
        f"error: {path}:1: written in trace format version 99; this GraphARC reads 1"]


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("tokens", -5, "tokens is -5, below its minimum 0"),
    ("tokens", "12", "tokens is '12', not an integer"),
    ("cost_usd", -0.5, "cost_usd is -0.5, below its minimum 0"),
    ("duration_ms", "slow", "duration_ms is 'slow', not a finite number"),
    ("step", 1.5, "step is 1.5, not an integer"),
    ("tokens", True, "tokens is True, not an integer"),
    ("tokens", None, "tokens is None, not an integer"),
    ("attempt", 0, "attempt is 0, below its minimum 1"),
])
def test_a_line_whose_numbers_a_reader_would_sum_wrongly_is_reported_as_damaged(tmp_path, field, value,
                                                                                 problem):
    from typer.testing import CliRunner

    from grapharc.cli.main import build_app

    path = tmp_path / "t.jsonl"
    path.write_text(lines(EVENT) + json.dumps({**EVENT, field: value}) + "\n")
    with pytest.raises(TraceFormatError, match=f":2: is damaged: {problem}"):
        list(read_events(path))
    for command in (["metrics", str(path)], ["replay", str(path), "r"], ["cost", str(path)]):
        result = CliRunner().invoke(build_app(), command)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f":2: is damaged: {problem}" in result.stderr


def test_a_reader_of_one_run_passes_over_another_runs_numbers_but_not_a_line_that_is_no_event(tmp_path):
    """Reading one run checks the numbers it will sum (its own lines') and still refuses a line
    that is no event at all, whichever run it was meant for."""
    path = tmp_path / "t.jsonl"
    other = {**EVENT, "run_id": "other", "tokens": -5}
    path.write_text(lines(EVENT) + json.dumps(other) + "\n")
    assert [event["run_id"] for event in read_events(path, run_id="r")] == ["r"]
    with pytest.raises(TraceFormatError, match=":2: is damaged: tokens is -5"):
        list(read_events(path, run_id="other"))
    path.write_text(lines(EVENT) + json.dumps({"run_id": "other"}) + "\n")
    with pytest.raises(TraceFormatError, match=":2: is not a JSON object with a 'phase' field"):
        list(read_events(path, run_id="r"))
