"""The chat model every OpenAI-wire backend shares: ChatOpenAI plus retries, envelope and spend.

Tool calling, structured output, streaming and async come from ``langchain_openai``.
This subclass adds what GraphARC promises on top: one retry policy (the openai
client's own retries are off, so there is only one), one usage envelope with the
call's ``cost_usd``, and an optional ``SpendMeter`` checked before and charged
after every call. Backends differ only in routing and in where a price comes from.

Three of ChatOpenAI's private methods are overridden, as none has a public hook: the request
payload (a token limit by the name each provider reads), a stream chunk (its raw usage priced)
and the combined output (counts summed, prices not). grapharc-gateway caps langchain-openai to
the minor release tests/grapharc-gateway/test_private_names.py checks them against.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk, ChatResult, LLMResult
from langchain_openai import ChatOpenAI
from pydantic import ConfigDict, Field, field_validator

from grapharc.errors import ConfigurationError
from grapharc.gateway.envelope import call_cost, metered_result, reported_cost, wire_usage
from grapharc.gateway.errors import ProviderError, SpendCeilingError
from grapharc.gateway.retry import RetryPolicy, http_errors, is_transient
from grapharc.gateway.spend import SpendMeter, TokenPrice


def provider_error(spec: str, error: BaseException, attempts: int) -> BaseException:
    """A ProviderError naming ``spec`` for a provider or transport failure; anything else as-is."""
    retryable = is_transient(error)
    if isinstance(error, openai.APIStatusError):
        return ProviderError(spec, f"HTTP {error.status_code}: {_provider_message(error)}",
                             status_code=error.status_code, attempts=attempts, retryable=retryable)
    if isinstance(error, (openai.APITimeoutError, *http_errors("TimeoutException"))):
        return ProviderError(spec, "the request timed out", attempts=attempts, retryable=True)
    if isinstance(error, (openai.APIConnectionError, *http_errors("TransportError"))):
        cause = error.__cause__ or error
        return ProviderError(spec, f"the connection failed ({type(cause).__name__}: {cause})",
                             attempts=attempts, retryable=True)
    return error


def _provider_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        nested = body.get("error")
        message = body.get("message") or (nested.get("message") if isinstance(nested, dict) else None)
        if isinstance(message, str) and message:
            return message[:300]
    return error.message[:300]


class WireChatModel(ChatOpenAI):
    """A ChatOpenAI for one GraphARC backend, with its retry policy, envelope and spend meter.

    ``price_per_million`` prices calls whose provider reports no cost; ``free`` charges
    them 0.0 instead (a local server). Anything else reports ``cost_usd`` None.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    backend: str = "openai"
    price_per_million: TokenPrice | None = None
    free: bool = False
    spend_meter: SpendMeter | None = Field(default=None, exclude=True)
    retry_policy: RetryPolicy = Field(default_factory=RetryPolicy, exclude=True)
    max_retries: int | None = 0
    stream_usage: bool | None = True
    use_responses_api: bool | None = False

    @field_validator("price_per_million", mode="before")
    @classmethod
    def _coerce_price(cls, value: Any) -> TokenPrice | None:
        return None if value is None else TokenPrice.coerce(value)

    @field_validator("max_retries")
    @classmethod
    def _only_our_retries(cls, value: int | None) -> int:
        if value:
            raise ConfigurationError(
                f"max_retries={value!r} would stack the openai client's retries on GraphARC's",
                hint="pass retry_policy=RetryPolicy(attempts=...) instead")
        return 0

    @property
    def spec(self) -> str:
        """The ``backend/model`` spec this model answers for."""
        return f"{self.backend}/{self.model_name}"

    @property
    def _llm_type(self) -> str:
        return f"grapharc-{self.backend}"

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None,
                             **kwargs: Any) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if self.backend != "openai" and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _translate(self, error: BaseException, attempts: int) -> BaseException:
        return provider_error(self.spec, error, attempts)

    def _before_call(self) -> None:
        if self.spend_meter is not None:
            self.spend_meter.before_call(self.spec)

    def _envelope(self, result: ChatResult) -> float | None:
        """Put the usage envelope and ``cost_usd`` on every generation; return the cost."""
        raw = (result.llm_output or {}).get("token_usage") or None
        envelope: UsageMetadata | None = wire_usage(raw) if raw else None
        first = result.generations[0].message if result.generations else None
        if envelope is None and isinstance(first, AIMessage) and first.usage_metadata:
            envelope = first.usage_metadata.copy()  # e.g. the Responses API, if a caller opts in
        cost = call_cost(reported_cost(raw.get("cost")) if raw else None, envelope,
                         self.price_per_million, self.free)
        for generation in result.generations:
            if envelope is not None and isinstance(generation.message, AIMessage):
                generation.message.usage_metadata = envelope
            generation.message.response_metadata["cost_usd"] = cost
        result.llm_output = {**(result.llm_output or {}), "cost_usd": cost}
        return cost

    def _combine_llm_outputs(self, llm_outputs: list[dict[str, Any] | None]) -> dict[str, Any]:
        counts_only = [{**output, "token_usage": _counts(output.get("token_usage") or {})} if output
                       else output for output in llm_outputs]  # langchain sums counts, not prices
        combined = super()._combine_llm_outputs(counts_only)
        costs = [output.get("cost_usd") for output in llm_outputs if output]
        complete = bool(costs) and None not in costs
        combined["cost_usd"] = sum(costs) if complete else None  # a partial sum would understate
        return combined

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict[str, Any], default_chunk_class: type, base_generation_info: dict[str, Any] | None
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(chunk, default_chunk_class,
                                                                base_generation_info)
        usage = chunk.get("usage")
        if generation is not None and usage:
            envelope = wire_usage(usage)
            if isinstance(generation.message, AIMessageChunk):
                generation.message.usage_metadata = envelope
            generation.message.response_metadata["cost_usd"] = call_cost(
                reported_cost(usage.get("cost")), envelope, self.price_per_million, self.free)
        return generation

    def _trailing_cost_chunk(self, tally: _StreamTally) -> ChatGenerationChunk | None:
        """A free backend's 0.0 for a stream that carried no usage chunk (others stay unpriced)."""
        if tally.priced or not self.free:
            return None
        return ChatGenerationChunk(message=AIMessageChunk(content="", response_metadata={"cost_usd": 0.0}))

    def _stream_cost(self, tally: _StreamTally) -> float | None:
        if tally.priced:
            return tally.cost
        return 0.0 if self.free else None

    def _crossed(self, cost: float | None) -> SpendCeilingError | None:
        return None if self.spend_meter is None else self.spend_meter.record(self.spec, cost)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        self._before_call()
        generate = super()._generate
        result = self.retry_policy.call(lambda: generate(messages, stop, run_manager, **kwargs),
                                        self._translate)
        crossed = self._crossed(self._envelope(result))
        if crossed is not None:
            if run_manager is not None:  # usage meters still see the call that crossed the line
                run_manager.on_llm_end(metered_result(result))
            raise crossed
        return result

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        self._before_call()
        agenerate = super()._agenerate
        result = await self.retry_policy.acall(lambda: agenerate(messages, stop, run_manager, **kwargs),
                                               self._translate)
        crossed = self._crossed(self._envelope(result))
        if crossed is not None:
            if run_manager is not None:
                await run_manager.on_llm_end(metered_result(result))
            raise crossed
        return result

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        self._before_call()
        open_stream = super()._stream
        tally = _StreamTally(keep=self.spend_meter is not None and run_manager is not None)
        try:
            for chunk in self.retry_policy.stream(lambda: open_stream(messages, stop, run_manager, **kwargs),
                                                  self._translate):
                tally.add(chunk)
                yield chunk
            trailing = self._trailing_cost_chunk(tally)
            if trailing is not None:
                tally.add(trailing)
                yield trailing
        finally:  # a stream that delivered anything was billed, even if it broke before its usage
            crossed = self._crossed(self._stream_cost(tally)) if tally.received else None
        if crossed is not None:
            if run_manager is not None and tally.total is not None:
                run_manager.on_llm_end(LLMResult(generations=[[tally.total]]))
            raise crossed

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        self._before_call()
        open_stream = super()._astream
        tally = _StreamTally(keep=self.spend_meter is not None and run_manager is not None)
        try:
            async for chunk in self.retry_policy.astream(
                    lambda: open_stream(messages, stop, run_manager, **kwargs), self._translate):
                tally.add(chunk)
                yield chunk
            trailing = self._trailing_cost_chunk(tally)
            if trailing is not None:
                tally.add(trailing)
                yield trailing
        finally:
            crossed = self._crossed(self._stream_cost(tally)) if tally.received else None
        if crossed is not None:
            if run_manager is not None and tally.total is not None:
                await run_manager.on_llm_end(LLMResult(generations=[[tally.total]]))
            raise crossed


def _counts(usage: dict[str, Any]) -> dict[str, Any]:
    """The integer counts of a usage object (nested ones too), without prices like ``cost``."""
    kept: dict[str, Any] = {}
    for key, value in usage.items():
        if isinstance(value, dict):
            kept[key] = _counts(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            kept[key] = value
    return kept


class _StreamTally:
    """What a stream delivered: whether anything arrived, its cost, and (when needed) the sum."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.received = False
        self.priced = False
        self.cost: float | None = None
        self.total: ChatGenerationChunk | None = None

    def add(self, chunk: ChatGenerationChunk) -> None:
        self.received = True
        if "cost_usd" in chunk.message.response_metadata:
            self.priced = True
            self.cost = chunk.message.response_metadata["cost_usd"]
        if self.keep:
            self.total = chunk if self.total is None else self.total + chunk
