"""benchmarks/sdk_differential.py without ``langgraph dev``: its comparison on canned observations
(through its ``--canned`` command line), and every one of its SDK calls (sdk_calls.py) made
against a real ``grapharc serve`` and observed."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from server_process import PATIENCE_SECONDS, ServerProcess, grapharc_serve

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sdk_differential.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sdk_differential", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


differential = _load()
Observation = differential.Observation


def _run(*options: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, str(SCRIPT), *options], capture_output=True, text=True,
                          timeout=PATIENCE_SECONDS * 5)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_key_paths_go_two_levels_deep_and_lists_share_one_path() -> None:
    answer = {"values": {"a": 1, "b": {"deep": 2}}, "tasks": [{"id": 1}, {"name": "x"}], "next": []}
    assert differential.key_paths(answer) == {"values", "values.a", "values.b", "tasks", "tasks.[].id",
                                              "tasks.[].name", "next"}


def test_a_call_that_failed_on_langgraph_dev_gets_no_verdict_unless_it_is_meant_to_fail() -> None:
    theirs, ours = Observation("raised Exception", detail="boom"), Observation("ok", ("a",))
    assert differential.compare("c", theirs, ours).verdict == "no verdict"
    meant = differential.compare("c", theirs, ours, meant_to_fail=True)
    assert meant.verdict == "differs"
    assert meant.differences == ("outcome: raised Exception on langgraph dev, ok here",)
    same_failure = differential.compare("c", theirs, Observation("raised Exception"), meant_to_fail=True)
    assert same_failure.verdict == "same"


def test_the_canned_comparison_names_each_difference(tmp_path: Path) -> None:
    canned = {
        "theirs": {"same": {"outcome": "ok", "keys": ["a", "b"]},
                   "keys": {"outcome": "ok", "keys": ["a", "b"]},
                   "events": {"outcome": "ok", "events": ["metadata", "values", "values", "values"]},
                   "status": {"outcome": "ok"},
                   "broken there": {"outcome": "HTTP 500"}},
        "ours": {"same": {"outcome": "ok", "keys": ["a", "b"]},
                 "keys": {"outcome": "ok", "keys": ["a", "c"]},
                 "events": {"outcome": "ok", "events": ["metadata", "values", "end"]},
                 "status": {"outcome": "HTTP 501", "detail": "refused"},
                 "broken there": {"outcome": "ok"}},
    }
    (tmp_path / "canned.json").write_text(json.dumps(canned))

    printed = _run("--canned", str(tmp_path / "canned.json"), "--json").stdout
    found = {v["call"]: v for v in json.loads(printed)}
    assert {name: v["verdict"] for name, v in found.items()} == {
        "same": "same", "keys": "differs", "events": "differs", "status": "differs",
        "broken there": "no verdict"}
    assert found["keys"]["differences"] == ["keys missing here: b", "keys only here: c"]
    assert found["events"]["differences"] == [
        "events: [metadata, valuesx3] on langgraph dev, [metadata, values, end] here"]
    assert found["status"]["differences"] == ["outcome: ok on langgraph dev, HTTP 501 here"]
    assert found["broken there"]["differences"] == ["failed on langgraph dev: HTTP 500"]

    text = _run("--canned", str(tmp_path / "canned.json")).stdout
    assert "    - keys missing here: b" in text
    assert text.splitlines()[-1] == "1 same, 3 differs, 1 no verdict of 5 calls"


@pytest.mark.parametrize("silent", ["theirs", "ours"])
def test_no_verdict_is_printed_when_a_server_answered_no_call(tmp_path: Path, silent: str) -> None:
    unreachable = {"outcome": "raised ConnectError", "detail": "connection refused"}
    canned = {side: {"threads.create": unreachable if side == silent else {"outcome": "ok", "keys": ["a"]},
                     "threads.get": {"outcome": "skipped: needs thread"} if side == silent else
                     {"outcome": "ok", "keys": ["b"]}}
              for side in ("theirs", "ours")}
    (tmp_path / "canned.json").write_text(json.dumps(canned))

    done = subprocess.run([sys.executable, str(SCRIPT), "--canned", str(tmp_path / "canned.json")],
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS)

    assert (done.returncode, done.stdout) == (1, ""), done.stdout + done.stderr
    server = "langgraph dev" if silent == "theirs" else "grapharc serve"
    assert f"{server} answered none of the 2 calls (the first: raised ConnectError" in done.stderr


@pytest.mark.parametrize(("content", "says"), [
    (None, "canned.json' is not an existing file"), ("{not json", "--canned {}: not JSON"),
    ('{"theirs": []}', '--canned {}: not {{"theirs"')])
def test_a_canned_file_it_cannot_use_is_named_with_what_is_wrong(tmp_path: Path, content: str | None,
                                                                 says: str) -> None:
    """A missing file is refused as the option's value; one that is there, for what is in it."""
    if content is not None:
        (tmp_path / "canned.json").write_text(content)

    done = subprocess.run([sys.executable, str(SCRIPT), "--canned", str(tmp_path / "canned.json")],
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS)

    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert "--canned" in done.stderr and says.format(tmp_path / "canned.json") in done.stderr
    assert "Traceback" not in done.stderr


def test_every_call_reaches_a_real_server_and_each_answer_is_observed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                             "--registry", "client_graphs:register")
    with ServerProcess(command) as server:
        observed = asyncio.run(differential.observe_all(server.json_announcement()["url"], tmp_path))

    assert list(observed) == [call.name for call in differential.CALLS]
    worked = {name for name, seen in observed.items() if seen.outcome == "ok"}
    assert {"threads.create", "threads.get_state at the interrupt", "runs.create then runs.join",
            "runs.cancel a run in flight", "runs.wait stateless", "threads.delete"} <= worked
    streamed = observed["runs.stream values+updates to an interrupt"]
    assert streamed.events[0] == "metadata" and {"values", "updates"} <= set(streamed.events)
    assert "updates:__interrupt__" in streamed.keys
    assert "values.notes" in observed["threads.get_state at the interrupt"].keys
    crons = {name: seen.outcome for name, seen in observed.items() if name.startswith("crons.")}
    assert crons == dict.fromkeys(("crons.create", "crons.search", "crons.count", "crons.update",
                                   "crons.delete"), "ok")
    assert {"cron_id", "schedule", "next_run_date", "payload"} <= set(observed["crons.create"].keys)
    stored = {name: seen.outcome for name, seen in observed.items() if name.startswith("store.")}
    assert stored == dict.fromkeys(("store.put_item", "store.get_item", "store.search_items",
                                    "store.list_namespaces", "store.delete_item"), "ok")
    assert set(observed["store.get_item"].keys) == {"namespace", "key", "value", "value.v", "created_at",
                                                    "updated_at"}
