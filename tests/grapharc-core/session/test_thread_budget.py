"""A session's budget bounds the thread: a pause, an approval or a SIGKILL and a recovery do not
hand it a fresh allowance."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from session_graphs import SPEND_CEILING, visits
from session_procs import session_op, wait_for, wait_until

from grapharc.session import SessionManager


def test_a_thread_paused_at_90_percent_cannot_spend_another_100_after_an_approval(
        manager: SessionManager, directory: Path, marks: Path) -> None:
    paused = manager.start("spender", {}, thread_id="letter")
    assert paused.status == "paused" and visits(marks, "draft") == 1
    approval = manager.approvals("letter")[0]

    code, decided = session_op(directory, "resume", "letter", approval.approval_id, "approved",
                               "anyone").result()

    assert (code, decided["error"]) == (2, "BudgetExceededError")
    assert f"limit of {SPEND_CEILING}" in decided["message"]
    failed = manager.get("letter")
    assert failed.status == "failed" and "tokens budget exceeded" in failed.error
    assert visits(marks, "send") == 1  # it ran, made its call, and the call crossed the thread's ceiling


def test_a_thread_killed_after_spending_90_percent_cannot_spend_another_100_on_recovery(
        manager: SessionManager, directory: Path, marks: Path, tmp_path: Path, reap) -> None:
    ready = tmp_path / "ready"
    child = reap(session_op(directory, "start", "spender-ungated", "killed", env={
        "GRAPHARC_TEST_BLOCK_AT": "send", "GRAPHARC_TEST_READY": str(ready), "GRAPHARC_TEST_LEASE": "1"}))
    wait_for(ready, child)
    os.kill(child.process.pid, signal.SIGKILL)
    child.process.wait(timeout=30)
    wait_until(lambda: not manager.get("killed").lease_live(time.time()))  # the dead runner's lease lapses

    code, recovered = session_op(directory, "recover", "killed").result()

    assert (code, recovered["error"]) == (2, "BudgetExceededError")
    assert visits(marks, "draft") == 1 and visits(marks, "send") == 2
    assert manager.get("killed").status == "failed"


def test_each_run_a_turn_makes_is_on_the_sessions_audit_trail_with_its_spend(
        manager: SessionManager) -> None:
    manager.start("spender", {}, thread_id="runs")
    runs = [entry.detail for entry in manager.audit("runs") if entry.kind == "run"]
    assert [(run["attempt"], run["status"]) for run in runs] == [(1, "interrupted")]
    assert runs[0]["tokens"] > 0 and runs[0]["run_id"]
