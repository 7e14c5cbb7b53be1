"""The hostile model against the container executor (the fake engine): nothing gets through."""

from __future__ import annotations

from pathlib import Path

import pytest
from container_images import IMAGE
from fake_docker import FakeDockerEngine

from grapharc.testing.hostile_kit import prepare_arena, run_hostile


def test_the_hostile_model_gets_nothing_through_the_container_executor(
        engine: FakeDockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine.base_url)
    monkeypatch.setenv("GRAPHARC_CONTAINER_IMAGE", IMAGE)
    with prepare_arena(tmp_path / "arena") as arena:
        report = run_hostile(arena, "container", tmp_path / "trace.jsonl")
    assert report.violations == ()
    ran = [r for r in report.results if r.outcome is not None]
    assert ran and all(r.outcome in ("error", "refused") for r in ran)
    created = engine.calls("POST", r"/containers/create")
    reached = sum(r.outcome == "error" for r in report.results)  # refused in the tool, inside a container
    assert len(created) == reached + 1  # and the planted note, read first
    assert engine.containers == {}
