"""Graphs served to LangGraph's clients (``--registry client_graphs:register``), by the JavaScript
client's test and by benchmarks/sdk_differential.py (which serves them with ``langgraph dev`` too):
the credit demo (an approval to answer), a one-node chat whose reply comes from the scripted
``mock/`` model (tokens for a ``messages-tuple`` stream to carry), and api_graphs.py's waiter (a
run that stays in flight until its release file exists, to cancel)."""

from __future__ import annotations

from typing import Annotated, Any

from api_graphs import WAITER, WaiterState, register_one_node, wait_for_release
from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import Field

from grapharc.examples.approval import register_credit_graph
from grapharc.models.scripted import ScriptedChatModel
from grapharc.runtime.state import GraphARCState

CHAT = "chat"
CHAT_REPLY = "Your loan application LN-7310 is with the credit desk."
_MODEL = ScriptedChatModel(model_name="mock/js-chat", responses=[CHAT_REPLY], cycle=True)


class ChatState(GraphARCState):
    """The conversation so far."""

    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)


def reply(state: ChatState) -> dict[str, Any]:
    """Answer the conversation with the scripted model's next reply."""
    return {"messages": [_MODEL.invoke(state.messages)]}


def register(manager: Any) -> None:
    """Register the credit demo, the chat and the waiter on ``manager``."""
    register_credit_graph(manager)
    register_one_node(manager, CHAT, ChatState, reply, {"messages"})
    register_one_node(manager, WAITER, WaiterState, wait_for_release, {"released"})
