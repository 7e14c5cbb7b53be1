"""One usage envelope for every backend, so a budget meter reads the same fields whoever answered.

The shape is LangChain's ``usage_metadata``: ``input_tokens`` includes cached input
(read from or written to a prompt cache), ``total_tokens`` is input plus output, and
``input_token_details`` says how much of the input was cached. The call's price goes
on ``response_metadata["cost_usd"]``: the provider's figure when it reported one, else
one computed from ``price_per_million``, else 0.0 for a free backend, else None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langchain_core.messages.ai import InputTokenDetails, UsageMetadata
from langchain_core.outputs import ChatResult, LLMResult

from grapharc.gateway.spend import TokenPrice


def _tokens(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_envelope(input_tokens: int, output_tokens: int, *, cache_read: int = 0,
                   cache_creation: int = 0, reasoning: int = 0) -> UsageMetadata:
    """The envelope for a call whose ``input_tokens`` already include the cached ones."""
    envelope: UsageMetadata = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    input_details: InputTokenDetails = {}
    if cache_read:
        input_details["cache_read"] = cache_read
    if cache_creation:
        input_details["cache_creation"] = cache_creation
    if input_details:
        envelope["input_token_details"] = input_details
    if reasoning:
        envelope["output_token_details"] = {"reasoning": reasoning}
    return envelope


def wire_usage(usage: Mapping[str, Any]) -> UsageMetadata:
    """The envelope of an OpenAI-wire ``usage`` object (its ``prompt_tokens`` include cached ones)."""
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return usage_envelope(
        _tokens(usage.get("prompt_tokens")), _tokens(usage.get("completion_tokens")),
        cache_read=_tokens(prompt_details.get("cached_tokens")),
        cache_creation=_tokens(prompt_details.get("cache_write_tokens")),
        reasoning=_tokens(completion_details.get("reasoning_tokens")))


def cli_usage(usage: Mapping[str, Any]) -> UsageMetadata:
    """The envelope of Claude's ``usage`` object, whose ``input_tokens`` exclude cached input."""
    cache_read = _tokens(usage.get("cache_read_input_tokens"))
    cache_creation = _tokens(usage.get("cache_creation_input_tokens"))
    return usage_envelope(_tokens(usage.get("input_tokens")) + cache_read + cache_creation,
                          _tokens(usage.get("output_tokens")),
                          cache_read=cache_read, cache_creation=cache_creation)


def reported_cost(value: Any) -> float | None:
    """A provider-reported price in USD, or None when absent or malformed (never guessed)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
            and value >= 0:
        return float(value)
    return None


def call_cost(reported: float | None, envelope: UsageMetadata | None,
              price: TokenPrice | None, free: bool) -> float | None:
    """The call's price: reported, else priced from tokens, else 0.0 when free, else None."""
    if reported is not None:
        return reported
    if price is not None and envelope is not None:
        cached = (envelope.get("input_token_details") or {}).get("cache_read", 0)
        return price.cost(envelope["input_tokens"], envelope["output_tokens"], cached)
    return 0.0 if free else None


def metered_result(result: ChatResult) -> LLMResult:
    """One chat call as usage meters' ``on_llm_end`` reads it (a call that crossed a spend ceiling
    is still reported before the error is raised)."""
    return LLMResult(generations=[list(result.generations)], llm_output=result.llm_output)
