"""Under LANGGRAPH_STRICT_MSGPACK=true (how LangGraph will read checkpoints by default) the
resume stories still pass and no process refuses a class from a checkpoint.

LangGraph reads the variable once, when it is imported, so the stories run in a pytest process of
their own with it set: one for them all, since its start-up (pytest, its plugins, LangGraph) costs
more than most stories. The stories start processes of their own, and a start-up hook
(``strict_startup/sitecustomize.py``) logs every class any of them refused or warned about, with
the test that was running, so each story answers for its own tests and its own processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).parents[1]

STORIES = {
    "a demo killed mid-node resumes in a new process": [
        "demos/test_stage_gates.py::test_stage0_a_process_killed_between_write_and_rename_resumes_to_exactly_one_report"],
    "a demo replays a run from its SQLite checkpoint with another model": [
        "demos/test_stage_gates.py::test_stage2_a_bad_model_output_is_pinned_to_node_step_and_delta_with_a_replay_point"],
    "a session paused in one process is resumed by another": [
        "session/test_lifecycle.py::test_a_run_pauses_on_an_interrupt_and_another_process_resumes_it"],
    "a fan-out's crashed and hung workers are outcomes in state": [
        "demos/test_stage_gates.py::test_stage3_a_crashed_and_a_hung_worker_still_yield_an_answer_with_both_causes"],
    "every shape of state, subgraph and fan-out reads back": ["runtime/test_checkpoint_serde.py"],
}
LEFT_OUT = "not allow_everything"
"""The one test of the stories that pins a refusal (test_checkpoint_serde.py's), deselected."""
UNUSED_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:schemathesis", "-p", "no:hypothesispytest",
                  "-p", "no:xdist")
"""Installed pytest plugins the stories do not use, left unloaded in their run (about 1 s of CPU)."""
OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.M)
"""A line of pytest's ``-rfEp`` summary: an outcome and the test's id as it was named."""


def selects(entry: str, node: str) -> bool:
    """Whether a story's ``entry`` (a file, or a file and a test) names the test ``node``, whose
    path is relative to this folder (pytest's summary) or to the repository (PYTEST_CURRENT_TEST)."""
    path, _, name = entry.partition("::")
    node_path, _, node_name = node.partition("::")
    return f"/{node_path}".endswith(f"/{path}") and (not name or node_name == name
                                                      or node_name.startswith(f"{name}["))


@dataclass(frozen=True)
class StrictRun:
    """The stories' one pytest run under strict msgpack: its output, each test's outcome and the
    serde events its processes logged."""

    output: str
    outcomes: dict[str, str]
    events: list[dict[str, object]]

    def story_outcomes(self, story: list[str]) -> dict[str, str]:
        """The outcome of each of the story's tests."""
        return {node: outcome for node, outcome in self.outcomes.items()
                if any(selects(entry, node) for entry in story)}

    def story_events(self, story: list[str]) -> list[dict[str, object]]:
        """The events logged while one of the story's tests ran, or while no test was running."""
        def ours(event: dict[str, object]) -> bool:
            running = str(event.get("test") or "").rsplit(" ", 1)[0]  # "NODE (call)"
            return not running or any(selects(entry, running) for entry in story)

        return [event for event in self.events if ours(event)]


@pytest.fixture(scope="module")
def strict_run(tmp_path_factory: pytest.TempPathFactory) -> StrictRun:
    """Every story's tests in one pytest process under strict msgpack, the hook logging."""
    folder = tmp_path_factory.mktemp("strict")
    log = folder / "serde-events.jsonl"
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "GRAPHARC_TEST_SERDE_LOG": str(log),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent / "strict_startup"),
                                                        os.environ.get("PYTHONPATH")]))}
    entries = list(dict.fromkeys(entry for story in STORIES.values() for entry in story))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEp", "-p", "no:cacheprovider",
                          *UNUSED_PLUGINS, "--basetemp", str(folder / "inner"), "-k", LEFT_OUT, *entries],
                         cwd=TESTS, env=env, capture_output=True, text=True, timeout=560)
    output = run.stdout[-6000:] + run.stderr[-3000:]
    assert run.returncode in (0, 1), output  # 1: a test failed, which its story reports
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return StrictRun(output, {node: outcome for outcome, node in OUTCOME.findall(run.stdout)}, events)


@pytest.mark.timeout(600)  # the first story waits for the run of them all
@pytest.mark.parametrize("story", STORIES.values(), ids=list(STORIES))
def test_the_story_passes_and_no_process_refuses_a_checkpointed_class(story: list[str],
                                                                      strict_run: StrictRun) -> None:
    outcomes = strict_run.story_outcomes(story)

    assert outcomes and set(outcomes.values()) == {"PASSED"}, strict_run.output
    assert [entry for entry in story if not any(selects(entry, node) for node in outcomes)] == []
    assert strict_run.story_events(story) == [], strict_run.story_events(story)
