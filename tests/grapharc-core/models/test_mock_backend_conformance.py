"""The scripted ``mock/`` backend passes the model-backend conformance kit."""

from __future__ import annotations

from grapharc.models import get_model
from grapharc.testing.backend_kit import ModelBackendConformance


class TestMockBackend(ModelBackendConformance):
    capabilities = frozenset({"completion", "async", "streaming", "tools"})

    def make_model(self):
        return get_model("mock/conformance")


def test_a_scripted_tool_call_comes_back_and_the_offered_tools_are_recorded():
    from langchain_core.messages import AIMessage

    call = {"name": "read_file", "args": {"path": "a.txt"}, "id": "c1"}
    model = get_model("mock/agent", responses=[AIMessage(content="", tool_calls=[call]), "done"])
    bound = model.bind_tools([{"type": "function", "function": {"name": "read_file", "parameters": {}}}])
    first = bound.invoke("go")
    assert first.tool_calls[0]["name"] == "read_file" and first.tool_calls[0]["args"] == {"path": "a.txt"}
    assert bound.invoke("again").content == "done"
    assert model.offered == [["read_file"], ["read_file"]]
