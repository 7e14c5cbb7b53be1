"""A tool call the conversation cannot hold is an error the model reads, and the run goes on.

A 23-digit integer argument once stopped ``grapharc agent`` with a dump of a Pydantic type (exit
2), and a script whose ``args`` was not an object said "this is a GraphARC bug" (issue 32, point
10). Now each is answered ``error: tool 'NAME': WHY``; the model's next turn is given that text
and the run ends as the script says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_tools import registry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from pydantic import Field

from grapharc.harness.agent import AgentNode
from grapharc.harness.permissions import PermissionPolicy
from grapharc.models.scripted import scripted_reply
from grapharc.testing import ScriptedChatModel

HUGE = 12345678901234567890123


class RecordingModel(ScriptedChatModel):
    """A scripted model that keeps the text of every message each turn was given."""

    seen: list[list[str]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append([str(message.content) for message in messages])
        return super()._generate(messages, *args, **kwargs)


def run(workspace: Path, first: Any) -> tuple[dict[str, Any], RecordingModel]:
    """The agent on a script: ``first`` (a scripted reply as JSON data), then the answer "done"."""
    model = RecordingModel(responses=[scripted_reply(first, 0), "done"])
    agent = AgentNode(model, registry(), workspace=workspace,
                      permissions=PermissionPolicy.from_flags(allow=["*"]))
    compiled = agent.graph().compile()
    try:
        return compiled.invoke({"task": "keep notes"}), model
    finally:
        compiled.close()


def told(out: dict[str, Any]) -> list[str]:
    return [str(message.content) for message in out["messages"] if isinstance(message, ToolMessage)]


def test_an_integer_wider_than_64_bits_is_an_error_the_next_turn_reads(tmp_path):
    out, model = run(tmp_path, {"tool_calls": [{"name": "big_output", "args": {"chars": HUGE}}]})
    assert out["status"] == "finished" and out["answer"] == "done"
    [error] = told(out)
    assert error.startswith("error: tool 'big_output': argument chars is an integer wider than 64 bits")
    assert error in model.seen[-1]


def test_arguments_that_are_not_an_object_are_an_error_the_next_turn_reads(tmp_path):
    out, model = run(tmp_path, {"tool_calls": [{"name": "read_note", "args": [1, 2]}]})
    assert out["status"] == "finished" and out["answer"] == "done"
    [error] = told(out)
    assert error == "error: tool 'read_note': takes an object of named arguments, got list"
    assert error in model.seen[-1]


def test_a_reply_keeps_its_good_calls_beside_an_unusable_one(tmp_path):
    out, _ = run(tmp_path, {"tool_calls": [{"name": "append_note", "args": {"name": "a", "text": "kept"}},
                                           {"name": "big_output", "args": {"chars": -HUGE}}]})
    assert (tmp_path / "a.txt").read_text() == "kept\n"
    assert [text.split(":")[0] for text in told(out)] == ["appended to a", "error"]


ODD = st.recursive(st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
                   | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
                   | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=ODD)
def test_any_json_arguments_end_in_a_result_or_an_error_the_model_reads(tmp_path_factory, args):
    workspace = tmp_path_factory.mktemp("ws")
    out, model = run(workspace, {"tool_calls": [{"name": "big_output", "args": args}]})
    assert out["status"] == "finished" and out["answer"] == "done"
    [answer] = told(out)
    assert answer in model.seen[-1]


def test_the_agent_command_answers_and_exits_0(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"content": "", "tool_calls": [{"name": "read_file", "args": {"path": "a.txt", "offset": HUGE}},
                                       {"name": "read_file", "args": ["a.txt"]}]}, "done"]))
    done = subprocess.run([sys.executable, "-m", "grapharc", "agent", "read a.txt", "--workspace",
                           str(workspace), "--model", "mock/demo", "--script", str(script), "--allow", "*",
                           "--json"],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["answer"] == "done"
    assert [call["outcome"] for call in document["tool_calls"]] == ["refused", "refused"]


def test_a_reply_without_unusable_calls_is_kept_as_it_is():
    from grapharc.harness.requested import storable_reply

    reply = AIMessage(content="", tool_calls=[{"name": "read_note", "args": {"name": "a"}, "id": "c1"}])
    assert storable_reply(reply) is reply
