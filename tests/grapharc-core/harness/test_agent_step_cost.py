"""What an agent step does once rather than every step or call: binding the model, re-checking the
conversation, reading the idempotency ledger."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from typing import Any

from agent_tools import registry
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from grapharc.harness.agent import AgentNode, AgentState
from grapharc.harness.conversation import Conversation
from grapharc.harness.ledger import digest
from grapharc.harness.permissions import PermissionPolicy
from grapharc.testing import ScriptedChatModel


class CountingModel(ScriptedChatModel):
    """A scripted model that counts how often it is bound to tools."""

    bindings: list[list[str]]

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append([tool["function"]["name"] for tool in tools])
        return super().bind_tools(tools, **kwargs)


def reply(index: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "read_note", "args": {"name": f"n{index}"},
                                              "id": f"c{index}"}])


def test_the_model_is_bound_once_per_set_of_tools_shown_not_once_a_step(tmp_path):
    model = CountingModel(responses=[reply(1), reply(2), reply(3), "done", "done again"], bindings=[])
    agent = AgentNode(model, registry(), workspace=tmp_path,
                      permissions=PermissionPolicy.from_flags(allow=["*"]))
    out = agent.graph().compile().invoke({"task": "read notes"})
    assert out["answer"] == "done"
    assert model.bindings == [[tool.name for tool in agent.visible()]]
    agent.permissions = PermissionPolicy.from_flags(allow=["*"], deny=["append_note"])
    agent.graph().compile().invoke({"task": "read notes again"})
    assert len(model.bindings) == 2 and "append_note" not in model.bindings[1]
    agent.model = CountingModel(responses=["a new model's answer"], bindings=[])
    assert agent.graph().compile().invoke({"task": "once more"})["answer"] == "a new model's answer"
    assert len(agent.model.bindings) == 1


class Holder(BaseModel):
    messages: Conversation


def test_a_conversation_of_message_objects_is_kept_as_copied_objects_and_anything_else_is_validated():
    messages = [HumanMessage("hi"), AIMessage("hello")]
    held = Holder(messages=messages).messages
    assert held is not messages and all(a is b for a, b in zip(held, messages, strict=True))
    from_dicts = Holder.model_validate({"messages": [{"type": "human", "content": "hi"}]}).messages
    assert isinstance(from_dicts[0], HumanMessage)
    state = AgentState(task="t", messages=[{"type": "ai", "content": "x"}])
    assert isinstance(state.messages[0], AIMessage)


def test_a_calls_digest_builds_no_json_encoder_and_keeps_its_canonical_text(monkeypatch):
    arguments = {"b": [1, 2.5, None], "a": "é", "when": date(2026, 12, 7)}
    canonical = json.dumps({"tool": "t", "arguments": arguments}, sort_keys=True, default=str,
                           separators=(",", ":"), ensure_ascii=False)
    built: list[object] = []
    init = json.JSONEncoder.__init__
    monkeypatch.setattr(json.JSONEncoder, "__init__",
                        lambda self, *args, **kwargs: built.append(self) or init(self, *args, **kwargs))
    digests = [digest("t", arguments) for _ in range(3)]
    assert built == []  # the encoder is built once, not once per call
    assert digests == [hashlib.sha256(canonical.encode()).hexdigest()] * 3


class CountingSaver(InMemorySaver):
    """An in-memory checkpointer that counts its reads of a thread's latest checkpoint."""

    reads = 0

    def get_tuple(self, config: Any) -> Any:
        CountingSaver.reads += 1
        return super().get_tuple(config)


def ledger_reads(tmp_path, calls: int) -> int:
    """Checkpoint reads of an agent run whose model asks for ``calls`` side-effecting writes in one reply."""
    writes = AIMessage(content="", tool_calls=[
        {"name": "append_note", "args": {"name": "todo", "text": f"line {i}"}, "id": f"w{i}"}
        for i in range(calls)])
    agent = AgentNode(ScriptedChatModel(responses=[writes, "done"]), registry(), workspace=tmp_path,
                      permissions=PermissionPolicy.from_flags(allow=["*"]))
    CountingSaver.reads = 0
    out = agent.graph().compile(checkpointer=CountingSaver()).invoke(
        {"task": "write"}, {"configurable": {"thread_id": f"t{calls}"}})
    assert out["answer"] == "done"
    assert (tmp_path / "todo.txt").read_text().splitlines()[-calls:] == [f"line {i}" for i in range(calls)]
    return CountingSaver.reads


def test_the_idempotency_ledger_reads_the_checkpoint_once_per_tools_step_not_thrice_per_call(tmp_path):
    assert ledger_reads(tmp_path, 2) == ledger_reads(tmp_path, 30)
