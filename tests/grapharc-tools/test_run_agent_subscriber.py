"""run_agent's update subscriber only watches: one that raises is dropped, never the run."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from grapharc.harness.run import run_agent
from grapharc.harness.setup import AgentSettings
from grapharc.testing import ScriptedChatModel


def test_a_subscriber_that_raises_is_dropped_and_the_agent_still_answers(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls = [AIMessage(content="", tool_calls=[{"name": "list_dir", "args": {}, "id": f"c{i}"}])
             for i in range(2)]
    model = ScriptedChatModel(responses=[*calls, "two listings, nothing there"])
    settings = AgentSettings(task="look twice", workspace=str(workspace), model="mock/x",
                             allow=("list_dir",), tools=("list_dir",))
    seen: list[str] = []

    def broken_printer(node: str, writes: dict[str, object]) -> None:
        seen.append(node)
        raise BrokenPipeError("stderr went away")

    with caplog.at_level(logging.WARNING, logger="grapharc.session.subscribers"):
        values = run_agent(settings, trace=tmp_path / "trace.jsonl", thread_id="t1",
                           on_update=broken_printer, model=model)

    assert values["answer"] == "two listings, nothing there"
    assert len(seen) == 1  # called once, then dropped
    assert "subscriber raised" in caplog.text
