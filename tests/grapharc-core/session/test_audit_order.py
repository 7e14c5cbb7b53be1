"""Nodes seen in several checkpoints at once are audited in the order they ran, not newest first."""

from __future__ import annotations

from types import SimpleNamespace

from grapharc.session.audit import completed_runs


def snapshot(step: int, *names: str) -> SimpleNamespace:
    tasks = [SimpleNamespace(name=name, id=f"{name}-task", result={"log": [name]}) for name in names]
    return SimpleNamespace(metadata={"step": step}, tasks=tasks)


def test_runs_from_several_checkpoints_come_oldest_step_first_and_keep_a_steps_task_order():
    history = [snapshot(3, "n4"), snapshot(2, "n3a", "n3b"), snapshot(1, "n2"), snapshot(0, "n1")]
    runs, resume_at = completed_runs(history, since_step=0)
    assert [run.node for run in runs] == ["n1", "n2", "n3a", "n3b", "n4"]
    assert [run.step for run in runs] == [1, 2, 3, 3, 4]
    assert resume_at == 3
