"""The tool calls a model's reply asks for, in a form the agent can keep in its state and answer.

A model may ask for a call the conversation cannot hold as a tool call: arguments that are not
an object, or an integer wider than 64 bits that no checkpoint can store (a 23-digit offset
once stopped the run with a dump of a type). Such a call becomes an *invalid tool call* (the
LangChain shape a provider's unparseable arguments already take) that carries why. The tools
node answers it like any refused call, ``error: tool 'NAME': WHY``, so the model reads the
error on its next turn and the run goes on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.messages.tool import invalid_tool_call

from grapharc.runtime.state import CHECKPOINT_INT_MAX, CHECKPOINT_INT_MIN, unstorable_int

INVALID = "invalid_tool_call"


def storable_reply(reply: Any) -> Any:
    """``reply`` with every tool call whose arguments a checkpoint cannot store made an invalid
    tool call saying why (any other reply is returned as it is)."""
    if not isinstance(reply, AIMessage) or not reply.tool_calls:
        return reply
    kept, refused = [], []
    for call in reply.tool_calls:
        where = unstorable_int(call["args"], "args")
        if where is None:
            kept.append(call)
            continue
        refused.append(invalid_tool_call(
            name=call["name"], args=json.dumps(call["args"], default=str), id=call.get("id"),
            error=f"argument {_shown(where)} is an integer wider than 64 bits; no tool takes a number "
                  f"outside {CHECKPOINT_INT_MIN} .. {CHECKPOINT_INT_MAX}"))
    if not refused:
        return reply
    return reply.model_copy(update={"tool_calls": kept,
                                    "invalid_tool_calls": [*reply.invalid_tool_calls, *refused]})


def _shown(where: str) -> str:
    """``args['a'][0]`` as ``a[0]``: where in the arguments, as the model named it."""
    named = re.sub(r"\[('[^']*'|\"[^\"]*\")\]", lambda key: "." + key[1][1:-1], where.removeprefix("args"))
    return named.lstrip(".")


def requested_calls(message: Any) -> list[dict[str, Any]]:
    """Every call ``message`` asks for: its tool calls, then its invalid ones (each to be answered)."""
    return [*(getattr(message, "tool_calls", None) or []),
            *(getattr(message, "invalid_tool_calls", None) or [])]


def invalid_reason(call: dict[str, Any]) -> str | None:
    """Why ``call`` cannot run as it was asked for, if it is an invalid tool call."""
    if call.get("type") != INVALID:
        return None
    return str(call.get("error") or "its arguments could not be read as an object of named arguments")
