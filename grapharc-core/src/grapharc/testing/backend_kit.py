"""A conformance kit for model-backend plugins: what every ``backend/model`` must do.

Subclass ``ModelBackendConformance`` in a class pytest collects, override
``make_model()`` to return a chat model that will answer (a scripted one, or a
real backend pointed at a local test server), and set ``capabilities`` to what
the backend registered. The kit checks the usage envelope budgets read, async
and streaming, and that a missing capability is refused rather than faked.

    class TestMyBackend(ModelBackendConformance):
        capabilities = frozenset({"completion", "async", "streaming"})

        def make_model(self):
            return get_model("mine/some-model", base_url=LOCAL_SERVER)
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel


class _Answer(BaseModel):
    answer: str


class ModelBackendConformance(ABC):
    """The model-backend contract as pytest tests; subclass it and implement ``make_model``."""

    capabilities: frozenset[str] = frozenset({"completion"})
    prompt: str = "Say something short."

    @abstractmethod
    def make_model(self) -> Any:
        """Return a fresh chat model of the backend under test, ready to answer."""

    def test_invoke_returns_an_ai_message_with_text(self) -> None:
        reply = self.make_model().invoke([HumanMessage(self.prompt)])
        assert isinstance(reply, AIMessage)
        assert isinstance(reply.content, str) and reply.content

    def test_usage_is_reported_in_one_envelope(self) -> None:
        usage = self.make_model().invoke([HumanMessage(self.prompt)]).usage_metadata
        assert usage is not None, "the backend must report usage_metadata"
        counts = [usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]]
        assert all(isinstance(count, int) and count >= 0 for count in counts)
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]

    def test_a_reported_cost_is_a_non_negative_number(self) -> None:
        reply = self.make_model().invoke([HumanMessage(self.prompt)])
        cost = reply.response_metadata.get("cost_usd")
        assert cost is None or (isinstance(cost, int | float) and cost >= 0)

    def test_async_invoke_when_declared(self) -> None:
        if "async" not in self.capabilities:
            pytest.skip("backend does not declare async")
        reply = asyncio.run(self.make_model().ainvoke([HumanMessage(self.prompt)]))
        assert isinstance(reply, AIMessage) and reply.content

    def test_streaming_when_declared(self) -> None:
        if "streaming" not in self.capabilities:
            pytest.skip("backend does not declare streaming")
        chunks = list(self.make_model().stream([HumanMessage(self.prompt)]))
        assert chunks, "a stream must yield at least one chunk"
        assert "".join(str(chunk.content) for chunk in chunks)

    def test_tool_calling_is_refused_unless_declared(self) -> None:
        if "tools" in self.capabilities:
            pytest.skip("backend declares tool calling; cover it with its own tests")

        def lookup(query: str) -> str:
            """Look something up."""
            return query

        with pytest.raises(NotImplementedError):
            self.make_model().bind_tools([lookup])

    def test_structured_output_is_refused_unless_declared(self) -> None:
        if "structured_output" in self.capabilities:
            pytest.skip("backend declares structured output; cover it with its own tests")
        with pytest.raises(NotImplementedError):
            self.make_model().with_structured_output(_Answer)
