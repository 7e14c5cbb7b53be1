"""The agent's conversation type: a list of LangChain messages that is cheap to re-check.

LangGraph validates the whole state before every node and every routing decision, and
LangChain's ``AnyMessage`` picks each message's class by calling a Python discriminator on
it: a cost that grows with the conversation, paid four times a step. ``Conversation`` keeps
that validation for anything that is not already a list of message objects (dicts, a
message's subclass, a tuple) and accepts a list whose every item is exactly one of
``AnyMessage``'s classes as it is (copied, as validation would), with one type check each.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args

from langchain_core.messages import AnyMessage
from pydantic import ValidatorFunctionWrapHandler, WrapValidator

MESSAGE_CLASSES = frozenset(get_args(member)[0] for member in get_args(get_args(AnyMessage)[0]))
"""The classes ``AnyMessage`` accepts, each exactly (their ``type`` field is a fixed literal)."""


def _checked(value: Any, handler: ValidatorFunctionWrapHandler) -> list[AnyMessage]:
    """``value`` copied when it is a list of message objects already, else validated in full."""
    if type(value) is list and MESSAGE_CLASSES.issuperset(map(type, value)):
        return list(value)
    result: list[AnyMessage] = handler(value)
    return result


Conversation = Annotated[list[AnyMessage], WrapValidator(_checked)]
"""``list[AnyMessage]`` that accepts a list of message objects without re-discriminating it."""
