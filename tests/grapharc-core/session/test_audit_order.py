"""Nodes seen in several checkpoints at once are audited in the order they ran, not newest first."""

from __future__ import annotations

from types import SimpleNamespace

from grapharc.session.audit import completed_runs


def snapshot(step: int, *names: str, branch: str = "c") -> SimpleNamespace:
    """A checkpoint of ``branch`` at ``step`` (its parent the one before) whose tasks ``names`` ran."""
    tasks = [SimpleNamespace(name=name, id=f"{name}-task", result={"log": [name]}) for name in names]
    return SimpleNamespace(metadata={"step": step}, tasks=tasks,
                           config={"configurable": {"checkpoint_id": f"{branch}{step}"}},
                           parent_config={"configurable": {"checkpoint_id": f"{branch}{step - 1}"}})


def test_runs_from_several_checkpoints_come_oldest_step_first_and_keep_a_steps_task_order():
    history = [snapshot(3, "n4"), snapshot(2, "n3a", "n3b"), snapshot(1, "n2"), snapshot(0, "n1")]
    runs, resume_at = completed_runs(history, since_step=0)
    assert [run.node for run in runs] == ["n1", "n2", "n3a", "n3b", "n4"]
    assert [run.step for run in runs] == [1, 2, 3, 3, 4]
    assert resume_at == 3


def test_only_the_threads_branch_is_audited_not_the_checkpoints_a_fork_left_behind():
    fork = snapshot(1, "n2-again", branch="f")
    fork.parent_config = {"configurable": {"checkpoint_id": "c0"}}  # forked from c0
    left_behind = [snapshot(2, "n3"), snapshot(1, "n2")]
    history = [snapshot(2, "n3-again", branch="f"), fork, *left_behind, snapshot(0, "n1")]
    runs, _resume_at = completed_runs(history, since_step=0)
    assert [run.node for run in runs] == ["n1", "n2-again", "n3-again"]


def saved(step: int, name: str, result: dict | None) -> SimpleNamespace:
    """A checkpoint the loop saved at ``step`` (its parent the one before), one task ``name``."""
    return SimpleNamespace(metadata={"step": step, "source": "loop"},
                           config={"configurable": {"checkpoint_id": f"c{step}"}},
                           parent_config={"configurable": {"checkpoint_id": f"c{step - 1}"}},
                           tasks=[SimpleNamespace(name=name, id=f"{name}-task", result=result)])


def test_a_node_without_saved_writes_waits_mid_pass_and_is_recorded_once_settled():
    # n1's writes are missing though the loop carried on from its checkpoint (c1 exists)
    history = [saved(1, "n2", None), saved(0, "n1", None)]
    runs, resume_at = completed_runs(history, since_step=0)
    assert runs == [] and resume_at == 0  # a pass may still be saving them: scan again later
    runs, resume_at = completed_runs(history, since_step=0, settled=True)
    assert [(run.step, run.node, run.writes) for run in runs] == [(1, "n1", None)]
    assert resume_at == 1  # n2, on the newest checkpoint, has not run
