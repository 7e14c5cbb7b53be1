"""Under LANGGRAPH_STRICT_MSGPACK=true (how LangGraph will read checkpoints by default) the
resume stories still pass and no process refuses a class from a checkpoint.

LangGraph reads the variable once, when it is imported, so each story runs as its own
pytest process with it set; the stories start processes of their own, and a start-up hook
(``strict_startup/sitecustomize.py``) logs every class any of them refused or warned about.
"""

from __future__ import annotations

import os
import subprocess
import sys
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
    "every shape of state, subgraph and fan-out reads back": [  # less the one that pins a refusal
        "runtime/test_checkpoint_serde.py", "-k", "not allow_everything"],
}


@pytest.mark.parametrize("story", STORIES.values(), ids=list(STORIES))
def test_the_story_passes_and_no_process_refuses_a_checkpointed_class(story: list[str],
                                                                      tmp_path: Path) -> None:
    log = tmp_path / "serde-events.jsonl"
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "GRAPHARC_TEST_SERDE_LOG": str(log),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent / "strict_startup"),
                                                        os.environ.get("PYTHONPATH")]))}

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--basetemp", str(tmp_path / "inner"), *story],
                         cwd=TESTS, env=env, capture_output=True, text=True, timeout=280)

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not log.exists(), log.read_text()
