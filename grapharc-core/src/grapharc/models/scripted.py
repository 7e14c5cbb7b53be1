"""The ``mock/`` backend: a scripted LangChain chat model, free and deterministic.

It replies with the next scripted response (or echoes the last message when
given none) and reports usage in LangChain's ``usage_metadata`` shape so token
budgets and traces see it exactly as they would see a real backend. A scripted
``AIMessage`` may carry ``tool_calls``, so an agent's tool loop can be scripted; the
model records which tools it was shown on every call (``offered``), so a test can
check that a denied tool never reached it. With ``follow_conversation`` the reply is picked by
how many AI replies the conversation already holds rather than by a counter, so a conversation
resumed in another process (a paused agent session) carries on where it stopped. Asked to
stream (``model.stream``, or a graph streamed in LangGraph's ``messages`` mode), it gives its reply
word by word (``_stream``; LangChain's ``_astream`` runs it), the last chunk carrying the tool
calls, usage and metadata, so token streaming is testable without a key.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field, PrivateAttr

from grapharc.errors import GraphARCError


class ScriptExhaustedError(GraphARCError):
    """A scripted model was called more times than it has responses."""


class ScriptError(GraphARCError, ValueError):
    """A script for the scripted model that is not a list of replies it can give."""

    hint = ('a script is a JSON list; each reply is a string (an answer) or {"content": "...", '
            '"tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]}')


_WORDS = re.compile(r"\s*\S+\s*|\s+")
"""A streamed reply's chunks: each word with the spaces around it (leading ones only first)."""


def count_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: one token per four characters, at least one."""
    return max(1, math.ceil(len(text) / 4))


class ScriptedChatModel(BaseChatModel):
    """Replies from a script, in order; with no script, echoes the last message.

    ``cycle=True`` starts the script again when it runs out instead of raising;
    ``follow_conversation=True`` answers a conversation holding N AI replies with response N.
    ``cost_usd`` is reported per call the way a priced provider would: 0.0 by default, since a
    scripted reply is free (so a dollar ceiling can be kept); None makes it an unpriced call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: Sequence[str | AIMessage] | None = None
    model_name: str = "scripted"
    cycle: bool = False
    follow_conversation: bool = False
    cost_usd: float | None = 0.0
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    offered: list[list[str]] = Field(default_factory=list)
    _position: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "grapharc-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _next_reply(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self.calls.append(list(messages))
            if self.responses is None:
                last = messages[-1].content if messages else ""
                return AIMessage(content=f"scripted reply to: {last}")
            if self.follow_conversation:
                self._position = sum(isinstance(message, AIMessage) for message in messages)
            if self._position >= len(self.responses):
                if not self.cycle or not self.responses:
                    raise ScriptExhaustedError(
                        f"scripted model {self.model_name!r} has no response left "
                        f"(it was given {len(self.responses)})",
                        hint="add responses, or pass cycle=True to repeat the script")
                self._position = 0
            reply = self.responses[self._position]
            self._position += 1
        return reply.model_copy() if isinstance(reply, AIMessage) else AIMessage(content=reply)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """The model shown ``tools`` (OpenAI function schemas); replies still come from the script."""
        return self.bind(tools=[_tool_name(tool) for tool in tools], **kwargs)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        """Not offered: a scripted reply is whatever the script says, not a parsed schema."""
        raise NotImplementedError("the scripted model replies from its script; script an AIMessage "
                                  "with the tool call or JSON you want instead")

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        reply, metadata = self._reply(messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=reply)], llm_output=metadata)

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        """The reply ``_generate`` gives, in chunks: a word (with the spaces after it) each, the
        last carrying the tool calls, usage and metadata; joined, they make that reply."""
        reply, _metadata = self._reply(messages, kwargs)
        words = _WORDS.findall(str(reply.content)) if isinstance(reply.content, str) else []
        for word in words:  # LangChain's stream() tells the callbacks of each chunk
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))
        calls = [tool_call_chunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index)
                 for index, call in enumerate([*reply.tool_calls, *reply.invalid_tool_calls])]
        last = AIMessageChunk(content="" if words else reply.content, tool_call_chunks=calls,
                              usage_metadata=reply.usage_metadata, response_metadata=reply.response_metadata,
                              chunk_position="last")
        yield ChatGenerationChunk(message=last)

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[AIMessage, dict[str, Any]]:
        """The next reply with its usage and metadata (and the tools it was shown recorded)."""
        with self._lock:
            self.offered.append(list(kwargs.get("tools") or []))
        reply = self._next_reply(messages)
        prompt = "".join(str(message.content) for message in messages)
        input_tokens, output_tokens = count_tokens(prompt), count_tokens(str(reply.content))
        reply.usage_metadata = {"input_tokens": input_tokens, "output_tokens": output_tokens,
                                "total_tokens": input_tokens + output_tokens}
        metadata: dict[str, Any] = {"model_name": self.model_name}
        if self.cost_usd is not None:
            metadata["cost_usd"] = self.cost_usd
        reply.response_metadata = {**reply.response_metadata, **metadata}
        return reply, metadata


def _tool_name(tool: Any) -> str:
    """The name of a tool as ``bind_tools`` receives it (a function schema, or anything named)."""
    if isinstance(tool, dict):
        function = tool.get("function")
        return str(function.get("name") if isinstance(function, dict) else tool.get("name"))
    return str(getattr(tool, "name", getattr(tool, "__name__", tool)))


def scripted_reply(entry: Any, index: int) -> str | AIMessage:
    """One script entry as a reply: a string, an ``AIMessage``, or JSON data
    ``{"content": "...", "tool_calls": [{"name": ..., "args": {...}}]}`` (ids are made up if absent)."""
    if isinstance(entry, str | AIMessage):
        return entry
    if not isinstance(entry, Mapping) or not set(entry) <= {"content", "tool_calls"}:
        raise ScriptError(f"script entry {index} must be a string or an object with 'content' and "
                          f"'tool_calls', got {_shape(entry)}")
    content, calls = entry.get("content", ""), entry.get("tool_calls", [])
    if not isinstance(content, str) or not isinstance(calls, list):
        raise ScriptError(f"script entry {index}: 'content' must be a string and 'tool_calls' a list")
    tool_calls, invalid = [], []
    for number, call in enumerate(calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str) or "args" not in call:
            raise ScriptError(f"script entry {index}, tool call {number}: needs a 'name' (a string) "
                              "and 'args'")
        asked = {"name": call["name"], "args": call["args"],
                 "id": str(call.get("id") or f"call-{index}-{number}")}
        if isinstance(call["args"], Mapping):
            tool_calls.append(asked)
        else:  # as a provider's unreadable arguments arrive: a call the agent answers with an error
            invalid.append(invalid_tool_call(**{**asked, "args": json.dumps(call["args"])},
                                             error=f"takes an object of named arguments, got "
                                                   f"{type(call['args']).__name__}"))
    return AIMessage(content=content, tool_calls=tool_calls, invalid_tool_calls=invalid)


def _shape(entry: Any) -> str:
    return f"keys {sorted(map(str, entry))}" if isinstance(entry, Mapping) else type(entry).__name__


def create_scripted_model(model: str, **kwargs: Any) -> ScriptedChatModel:
    """Factory for ``mock/<name>``: ``kwargs`` are ScriptedChatModel fields (``responses``...);
    responses may be JSON data (see ``scripted_reply``), so a script can come from a file."""
    responses = kwargs.pop("responses", None)
    if responses is not None:
        if isinstance(responses, str | bytes) or not isinstance(responses, Sequence):
            raise ScriptError(f"a script is a list of replies, got {type(responses).__name__}")
        responses = [scripted_reply(entry, index) for index, entry in enumerate(responses)]
    return ScriptedChatModel(model_name=model, responses=responses, **kwargs)
