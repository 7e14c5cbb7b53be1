"""A script for the mock/ backend can come from JSON, and can follow a resumed conversation."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from grapharc.models import get_model
from grapharc.models.scripted import ScriptError

SCRIPT = [{"tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]}, "done"]


def test_json_replies_become_tool_calls_with_made_up_ids():
    model = get_model("mock/s", responses=SCRIPT)
    reply = model.invoke([HumanMessage("go")])
    assert reply.tool_calls[0]["name"] == "read_file" and reply.tool_calls[0]["args"] == {"path": "a.txt"}
    assert reply.tool_calls[0]["id"] == "call-0-0"
    assert model.invoke([HumanMessage("go")]).content == "done"


def test_following_the_conversation_a_fresh_model_answers_where_a_resumed_one_stands():
    history = [HumanMessage("go"), AIMessage("", tool_calls=[{"name": "read_file", "args": {}, "id": "1"}]),
               ToolMessage("hello", tool_call_id="1")]
    fresh = get_model("mock/s", responses=SCRIPT, follow_conversation=True)
    assert fresh.invoke(history).content == "done"
    assert fresh.invoke(history[:1]).tool_calls[0]["name"] == "read_file"


@pytest.mark.parametrize("script", [{"a": 1}, "text", [{"tool_calls": "x"}], [{"bogus": 1}],
                                    [{"tool_calls": [{"args": {}}]}], [3]])
def test_a_script_that_is_not_a_list_of_replies_is_refused(script):
    with pytest.raises(ScriptError):
        get_model("mock/s", responses=script)
