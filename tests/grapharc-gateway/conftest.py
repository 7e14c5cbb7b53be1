"""Fixtures for the gateway's tests: a local OpenAI-compatible server, a fake ``claude``,
recorded retry delays, and a working directory with no stray .env or keys."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # gateway_fakes: the helper module beside this file

from gateway_fakes import FakeOpenAI  # noqa: E402

from grapharc.gateway import RetryPolicy  # noqa: E402

KEY_VARIABLES = ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "NOVITA_API_KEY")
BASE_URL_VARIABLES = ("OPENAI_BASE_URL", "OPENROUTER_BASE_URL", "OLLAMA_BASE_URL", "NOVITA_BASE_URL",
                      "OPENAI_API_BASE")


@pytest.fixture(autouse=True)
def clean_environment(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                      tmp_path: Path) -> Path:
    """Run every test in an empty directory with no provider keys or endpoints set (live
    tests keep the caller's keys: they exist to reach the real providers)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    if request.node.get_closest_marker("live"):
        return workdir
    for variable in (*KEY_VARIABLES, *BASE_URL_VARIABLES):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(workdir)
    return workdir


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@dataclass
class RecordedPolicy:
    """A RetryPolicy whose waits are recorded instead of slept."""

    sleeps: list[float] = field(default_factory=list)

    def policy(self, **overrides: Any) -> RetryPolicy:
        async def async_sleep(seconds: float) -> None:
            self.sleeps.append(seconds)

        return RetryPolicy(sleep=self.sleeps.append, async_sleep=async_sleep, **overrides)


@pytest.fixture
def recorded() -> RecordedPolicy:
    return RecordedPolicy()


@dataclass
class FakeClaude:
    """The fake ``claude`` on PATH: script its reply, then read how it was run."""

    log: Path
    reply_path: Path
    executable: Path

    def reply(self, **reply: Any) -> None:
        self.reply_path.write_text(json.dumps(reply), encoding="utf-8")

    def runs(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable = bin_dir / "claude"
    executable.write_text(f"#!{sys.executable}\n" + (HERE / "fake_claude.py").read_text(encoding="utf-8"),
                          encoding="utf-8")
    executable.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    fake = FakeClaude(tmp_path / "claude-log.jsonl", tmp_path / "claude-reply.json", executable)
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(fake.log))
    monkeypatch.setenv("FAKE_CLAUDE_REPLY", str(fake.reply_path))
    return fake
