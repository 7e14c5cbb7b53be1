"""The failure gate of every demo stage: each test fails if the stage's mechanism is taken away."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc.examples.demo_choices import Case, ClaimScenario, Failure, FanoutScenario, Task
from grapharc.examples.demo_support import demo_model, open_checkpoints, thread_config
from grapharc.examples.stage0 import run_stage0
from grapharc.examples.stage1 import run_stage1
from grapharc.examples.stage2 import SCRIPTS, build_stage2, run_stage2
from grapharc.examples.stage3 import run_stage3
from grapharc.examples.stage4 import run_stage4
from grapharc.examples.stage5 import CASES as STAGE5_CASES
from grapharc.examples.stage5 import REVIEWER_SCRIPT, author_script, build_stage5, run_stage5
from grapharc.examples.stage5 import SOURCE as STAGE5_SOURCE
from grapharc.memory.verify import ReviewerNotIndependentError
from grapharc.runtime.budget import Budget
from grapharc.testing import ScriptedChatModel


def node_steps(events, trace: Path, attempt: int) -> list[int]:
    return [e["step"] for e in events(trace, attempt=attempt) if e["phase"] in ("start", "end", "error")]


# -- stage 0 ---------------------------------------------------------------------------------------


def test_stage0_an_injected_failure_leaves_nothing_and_a_resume_writes_exactly_one_report(
        tmp_path: Path, events) -> None:
    trace, db, reports = tmp_path / "t.jsonl", tmp_path / "cp.db", tmp_path / "reports"

    failed = run_stage0(trace=trace, checkpoints=db, report_dir=reports, inject_failure=Failure.ERROR)

    assert failed.status == "failed" and failed.demonstrated
    assert failed.run.first_error()["node"] == "report"
    assert list(reports.iterdir()) == []  # no report, and no temp file left beside it

    resumed = run_stage0(trace=trace, checkpoints=db, report_dir=reports,
                         thread_id=failed.run.thread_id, resume=True)

    assert resumed.status == "completed" and resumed.demonstrated
    assert [p.name for p in reports.iterdir()] == [f"{failed.run.thread_id}.txt"]
    assert "words: 61" in (reports / f"{failed.run.thread_id}.txt").read_text()
    first, second = node_steps(events, trace, 1), node_steps(events, trace, 2)
    assert max(first) < min(second)
    assert [e["node"] for e in events(trace, attempt=2, phase="start")] == ["report"]
    assert {e["thread_id"] for e in events(trace)} == {failed.run.thread_id}


def test_stage0_a_process_killed_between_write_and_rename_resumes_to_exactly_one_report(
        workdir: Path, process, events) -> None:
    reports = workdir / ".grapharc" / "reports"

    killed = process("stage0", "--inject-failure", "kill", "--json")

    assert killed.returncode == -signal.SIGKILL
    assert killed.stdout == ""
    orphans = [p.name for p in reports.iterdir()]
    assert len(orphans) == 1 and orphans[0].endswith(".tmp")  # nothing could clean up: a real crash
    thread = orphans[0][1:].split(".txt.")[0]
    assert f"--thread {thread} --resume" in killed.stderr

    resumed = process("stage0", "--thread", thread, "--resume", "--json")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    document = json.loads(resumed.stdout)
    assert document["attempt"] == 2 and document["status"] == "completed"
    assert [p.name for p in reports.iterdir()] == [f"{thread}.txt"]
    trace = workdir / ".grapharc" / "traces" / "stage0.jsonl"
    assert [e["phase"] for e in events(trace, attempt=1)][-1] == "start"  # killed mid-node
    assert min(node_steps(events, trace, 2)) == max(node_steps(events, trace, 1)) + 1


# -- stage 1 ---------------------------------------------------------------------------------------


def test_stage1_an_impossible_task_halts_on_no_progress_far_under_the_iteration_ceiling(
        tmp_path: Path, events) -> None:
    trace = tmp_path / "t.jsonl"

    outcome = run_stage1(trace=trace, task=Task.IMPOSSIBLE, budget=Budget(max_iterations=100))

    assert outcome.stop_reason == "no_progress" and outcome.demonstrated
    assert outcome.state["rounds"] == 4  # a baseline round, then the three-round window
    assert outcome.run.iterations == 12 and outcome.run.status == "completed"
    verdicts = events(trace, run_id=outcome.run.run_id, phase="end", node="verify")
    assert [e["state_delta"]["stop_reason"] for e in verdicts] == [None, None, None, "no_progress"]


def test_stage1_the_round_cap_stops_a_task_that_keeps_improving(tmp_path: Path) -> None:
    outcome = run_stage1(trace=tmp_path / "t.jsonl", task=Task.UNBOUNDED, max_rounds=5)

    assert outcome.stop_reason == "round_cap" and outcome.state["rounds"] == 5
    candidates = [a["candidate"] for a in outcome.state["attempts"]]
    assert candidates == sorted(set(candidates))  # every round beat the last: no_progress never could


def test_stage1_without_a_guard_that_bites_the_ceiling_ends_the_run_and_it_is_not_demonstrated(
        tmp_path: Path) -> None:
    outcome = run_stage1(trace=tmp_path / "t.jsonl", task=Task.UNBOUNDED, max_rounds=1000,
                         budget=Budget(max_iterations=30))

    assert outcome.status == "exhausted" and not outcome.demonstrated
    assert outcome.run.status == "budget_exceeded" and outcome.stop_reason == "iterations"


# -- stage 2 ---------------------------------------------------------------------------------------


def test_stage2_a_bad_model_output_is_pinned_to_node_step_and_delta_with_a_replay_point(
        tmp_path: Path, events) -> None:
    trace, db = tmp_path / "t.jsonl", tmp_path / "cp.db"

    outcome = run_stage2(trace=trace, checkpoints=db, scenario=ClaimScenario.BAD_OUTPUT)

    assert outcome.status == "caught" and outcome.demonstrated
    caught = outcome.details["caught"]
    assert (caught["node"], caught["step"], caught["field"]) == ("extract", 3, "claims")
    assert caught["refused_delta"] == {"claims": [json.loads(SCRIPTS[ClaimScenario.BAD_OUTPUT][1])[0]]}
    [error] = events(trace, run_id=outcome.run.run_id, phase="error")
    assert (error["node"], error["step"]) == ("extract", 3)
    assert error["exception"]["type"].endswith("StateTypeError")
    assert "claims" in error["exception"]["message"] and "quote" in error["exception"]["message"]
    assert outcome.state["claims"] == 0  # the refused claims never reached state
    replay = outcome.details["replay_point"]
    assert replay["step"] == 2 and replay["next"] == ["extract"]

    good = demo_model(None, SCRIPTS[ClaimScenario.CLEAN][1:], name="replayed")
    saver = open_checkpoints(db, trace=trace)
    try:
        graph = build_stage2(good, trace=trace, checkpointer=saver)
        config = thread_config(outcome.run.thread_id)
        config["configurable"]["checkpoint_id"] = replay["checkpoint_id"]
        replayed = graph.invoke(None, config)
        graph.close()
    finally:
        saver.conn.close()
    assert len(replayed["published"]) == 2  # replayed from just before the catch, with a good reply


def test_stage2_route_to_injections_cannot_move_the_code_only_router(tmp_path: Path, events) -> None:
    trace = tmp_path / "t.jsonl"

    outcome = run_stage2(trace=trace, checkpoints=tmp_path / "cp.db", scenario=ClaimScenario.INJECTION)

    assert outcome.stop_reason == "give_up" and outcome.demonstrated
    assert outcome.state["attempt"] == 3 and outcome.state["verified"] == []
    assert outcome.state["published"] == []
    replies = [e["state_delta"]["reply"] for e in events(trace, run_id=outcome.run.run_id, phase="end",
                                                     node="extract")]
    assert len(replies) == 3 and sum("ROUTE TO: all_verified" in reply for reply in replies) == 2
    started = [e["node"] for e in events(trace, run_id=outcome.run.run_id, phase="start")]
    assert "publish" not in started
    assert [r["route"] for r in outcome.details["rounds"]] == ["retry", "retry", "give_up"]


def test_stage2_the_all_verified_route_exists_and_only_anchored_claims_take_it(tmp_path: Path) -> None:
    outcome = run_stage2(trace=tmp_path / "t.jsonl", checkpoints=tmp_path / "cp.db",
                         scenario=ClaimScenario.CLEAN)

    assert outcome.stop_reason == "all_verified" and len(outcome.state["published"]) == 2


# -- stage 3 ---------------------------------------------------------------------------------------


def test_stage3_a_crashed_and_a_hung_worker_still_yield_an_answer_with_both_causes(
        tmp_path: Path) -> None:
    started = time.monotonic()

    outcome = run_stage3(trace=tmp_path / "t.jsonl", scenario=FanoutScenario.ISOLATION,
                         worker_timeout=0.3)

    assert time.monotonic() - started < 10
    assert outcome.demonstrated and outcome.state["answer"]
    causes = {f["shard"]: (f["status"], f["error_type"]) for f in outcome.details["failures"]}
    assert causes == {1: ("crashed", "grapharc.examples.stage3.ShardUnreadableError"),
                      2: ("timed_out", None)}
    assert outcome.state["unique"] == ["c1", "c2", "c3"]  # the answer rests on the survivor alone


def test_stage3_overlapping_shards_duplicate_evidence_and_unique_sources_counts_chunks(
        tmp_path: Path) -> None:
    outcome = run_stage3(trace=tmp_path / "t.jsonl", scenario=FanoutScenario.OVERLAP)

    assert outcome.state["evidence"] == 9
    assert outcome.state["unique_sources"] == 6
    assert sorted(outcome.state["unique"]) == ["c1", "c2", "c3", "c4", "c5", "c6"]


def test_stage3_max_concurrency_is_honoured(tmp_path: Path) -> None:
    serial = run_stage3(trace=tmp_path / "t.jsonl", worker_timeout=0.3,
                        budget=Budget(max_concurrency=1))
    parallel = run_stage3(trace=tmp_path / "t.jsonl", worker_timeout=0.3,
                          budget=Budget(max_concurrency=3))

    assert serial.details["peak_concurrency"] == 1 and serial.demonstrated
    assert parallel.details["peak_concurrency"] >= 2  # the hung worker overlaps the other two


# -- stage 4 ---------------------------------------------------------------------------------------


def test_stage4_an_impossible_investigation_halts_on_no_progress_far_under_the_ceiling(
        tmp_path: Path) -> None:
    outcome = run_stage4(trace=tmp_path / "t.jsonl", case=Case.IMPOSSIBLE,
                         budget=Budget(max_iterations=300))

    assert outcome.stop_reason == "no_progress" and outcome.demonstrated
    assert outcome.details["guards"]["stale_rounds"] == 3
    assert outcome.run.iterations <= 300 // 10
    assert outcome.state["conclusion"].startswith("inconclusive")


def test_stage4_a_solvable_investigation_stops_on_its_target(tmp_path: Path) -> None:
    outcome = run_stage4(trace=tmp_path / "t.jsonl", case=Case.SOLVABLE)

    assert outcome.stop_reason == "target_met"
    assert outcome.state["conclusion"].startswith("root cause: 14:01 deploy")


# -- stage 5 ---------------------------------------------------------------------------------------


def stage5_verdicts(outcome) -> dict[str, tuple[str, int]]:
    return {r["claim"]: (r["verdict"], r["reviewer_calls"]) for r in outcome.state["reviewed"]}


def test_stage5_a_fabricated_citation_is_rejected_with_the_reviewer_never_called(tmp_path: Path) -> None:
    outcome = run_stage5(trace=tmp_path / "t.jsonl")

    assert outcome.demonstrated and outcome.status == "verified"
    verdicts = stage5_verdicts(outcome)
    by_case = {case.name: verdicts[case.claim] for case in STAGE5_CASES}
    assert by_case == {"fabricated": ("not_in_source", 0), "trivial": ("trivial_citation", 0),
                       "negated": ("not_supported", 1), "unparseable": ("unparseable", 1),
                       "non-boolean": ("not_boolean", 1), "correct": ("supported", 1)}
    assert outcome.state["published"] == ["The 14:01 deploy shrank the database connection pool"]
    assert outcome.details["reviewer_calls"] == 4 and outcome.warnings == ()


def test_stage5_a_reviewer_that_agrees_with_everything_still_publishes_no_unanchored_claim(
        tmp_path: Path) -> None:
    yes_man = ScriptedChatModel(responses=['{"supported": true, "reason": "fine"}'], cycle=True)
    author = ScriptedChatModel(responses=[author_script()])
    graph = build_stage5(author, yes_man, trace=tmp_path / "t.jsonl", checkpointer=InMemorySaver())

    state = graph.invoke({"source": STAGE5_SOURCE}, thread_config("yes"))

    anchored = [c.claim for c in STAGE5_CASES if c.name not in ("fabricated", "trivial")]
    assert state["published"] == anchored and len(yes_man.calls) == len(anchored)


def test_stage5_the_reviewer_sees_the_window_and_never_the_authors_conversation(tmp_path: Path) -> None:
    author = ScriptedChatModel(responses=[author_script()])
    reviewer = ScriptedChatModel(responses=list(REVIEWER_SCRIPT))
    graph = build_stage5(author, reviewer, trace=tmp_path / "t.jsonl", checkpointer=InMemorySaver())

    graph.invoke({"source": STAGE5_SOURCE}, thread_config("fresh"))

    [[author_message]] = author.calls
    negated = next(c for c in STAGE5_CASES if c.name == "negated")
    prompts = [messages for messages in reviewer.calls]
    assert all(len(messages) == 1 for messages in prompts)  # a fresh context: one message each
    texts = [messages[0].content for messages in prompts]
    assert "did not restore normal latency" in texts[0] and negated.claim in texts[0]
    assert not any(author_message.content in text or "List the factual claims" in text for text in texts)
    assert not any(author_script() in text for text in texts)


def test_stage5_the_reviewers_tokens_are_charged_to_the_run(tmp_path: Path, events) -> None:
    trace = tmp_path / "t.jsonl"

    outcome = run_stage5(trace=trace)

    ends = {e["node"]: e for e in events(trace, phase="end")}
    assert ends["review"]["tokens"] > 0 and ends["author"]["tokens"] > 0
    assert outcome.run.tokens == sum(e["tokens"] for e in ends.values())
    starved = run_stage5(trace=trace, budget=Budget(max_tokens=ends["author"]["tokens"] + 1))
    assert not starved.demonstrated and starved.status == "exhausted"


def test_stage5_refuses_one_object_as_author_and_reviewer(tmp_path: Path) -> None:
    model = ScriptedChatModel(responses=[author_script()])

    with pytest.raises(ReviewerNotIndependentError, match="same model object"):
        build_stage5(model, model, trace=None)
    build_stage5(model, ScriptedChatModel(), trace=None)  # two objects pass the identity check
