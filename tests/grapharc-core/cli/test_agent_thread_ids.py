"""``grapharc agent --sessions DIR --thread ID``: a thread id never becomes a path.

``--thread '../../ws/planted'`` once wrote the session's trace into the agent's own workspace,
and an absolute id wrote it anywhere (issue 32, point 11). The trace now goes under
``DIR/traces/`` by a name derived from the id (``grapharc.harness.trace_names``), checked as
``--trace`` is; an id with a control character or past 256 characters is refused, exit 2,
with a message naming it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grapharc.cli.agent_command import AgentInputError, session_trace
from grapharc.harness.trace_names import MAX_THREAD_ID_CHARS, thread_id_problem, trace_file_name


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "script.json").write_text(json.dumps(["done"]))
    return tmp_path


def agent(cwd: Path, thread: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grapharc", "agent", "answer", "--workspace", "ws",
                           "--model", "mock/demo", "--script", "script.json", "--sessions", "sessions",
                           "--thread", thread, "--json"],
                          capture_output=True, text=True, check=False, cwd=cwd)


def traces(top: Path) -> list[Path]:
    return sorted(path.relative_to(top) for path in top.rglob("*.jsonl"))


@pytest.mark.parametrize("thread", ["../../ws/planted", "../ws/planted", "{top}/planted", "..", ".hidden"])
def test_a_thread_id_that_reads_as_a_path_names_a_trace_under_the_sessions_folder(folders, thread):
    thread = thread.format(top=folders)
    done = agent(folders, thread)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["thread"] == thread
    [trace] = traces(folders)
    assert trace.parent == Path("sessions/traces") and trace.name == trace_file_name(thread)
    events = [json.loads(line) for line in (folders / trace).read_text().splitlines()]
    assert {event["thread_id"] for event in events if "thread_id" in event} == {thread}


@pytest.mark.parametrize(("thread", "problem"), [
    ("x" * (MAX_THREAD_ID_CHARS + 1), f"at most {MAX_THREAD_ID_CHARS} characters"),
    ("a\nb", "control character"),
    ("tab\there", "control character"),
])
def test_an_unusable_thread_id_is_refused_naming_it_and_nothing_is_written(folders, thread, problem):
    done = agent(folders, thread)
    assert done.returncode == 2
    message = json.loads(done.stdout)["error"]["message"]
    assert problem in message and f"thread id {thread!r}"[:40] in message
    assert "Traceback" not in done.stderr
    assert traces(folders) == [] and not (folders / "sessions").exists()


def test_a_plain_thread_id_keeps_its_own_name(folders):
    assert agent(folders, "fix-bug_12.v2").returncode == 0
    assert traces(folders) == [Path("sessions/traces/fix-bug_12.v2.jsonl")]


def test_a_nul_byte_is_refused_where_a_thread_id_reaches_the_trace_path(folders):
    with pytest.raises(AgentInputError, match=r"thread id 'a\\x00b': a thread id cannot hold a control"):
        session_trace(str(folders / "ws"), folders / "sessions", "a\x00b")


def test_a_derived_trace_is_checked_as_trace_is(folders):
    inside = folders / "ws" / "sessions"
    with pytest.raises(AgentInputError, match="inside the workspace"):
        session_trace(str(folders / "ws"), inside, "t1")
    (folders / "sessions" / "traces").mkdir(parents=True)
    (folders / "sessions" / "traces" / "t2.jsonl").write_text("not a trace\n")
    with pytest.raises(AgentInputError, match=r"the trace of thread 't2' cannot go to .*not a JSONL trace"):
        session_trace(str(folders / "ws"), folders / "sessions", "t2")


@given(st.text(min_size=1, max_size=MAX_THREAD_ID_CHARS))
def test_any_usable_thread_id_names_one_plain_file(thread):
    if thread_id_problem(thread) is not None:
        return
    name = trace_file_name(thread)
    assert "/" not in name and "\x00" not in name and not name.startswith(".")
    assert name.endswith(".jsonl") and len(name.encode()) <= 255
    assert Path(name).name == name
