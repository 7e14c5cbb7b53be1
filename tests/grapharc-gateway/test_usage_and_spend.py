"""One usage envelope and the call's cost_usd from every wire backend; SpendMeter on both sides."""

from __future__ import annotations

import asyncio

import pytest
from gateway_fakes import Reply, Status
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage

from grapharc.errors import ConfigurationError
from grapharc.gateway import ProviderError, SpendCeilingError, SpendMeter, TokenPrice, get_model
from grapharc.runtime.tokens import node_usage_scope


@pytest.fixture
def model_for(fake_openai, recorded):
    def build(spec: str, **kwargs):
        kwargs.setdefault("retry_policy", recorded.policy())
        return get_model(spec, base_url=fake_openai.base_url, api_key="k", **kwargs)
    return build


def test_cached_input_is_folded_into_input_and_total_and_reported_as_cache_read(model_for, fake_openai):
    fake_openai.script(Reply(prompt_tokens=1000, cached_tokens=800, completion_tokens=50))
    reply = model_for("openai/gpt-4o-mini").invoke("hi")
    assert reply.usage_metadata == {"input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050,
                                    "input_token_details": {"cache_read": 800}}


def test_a_streamed_call_reports_the_same_envelope(model_for, fake_openai):
    fake_openai.script(Reply(content="a b", prompt_tokens=1000, cached_tokens=800, completion_tokens=50,
                             cost=0.25))
    chunks = list(model_for("openrouter/anthropic/claude-haiku-4.5").stream("hi"))
    total = sum(chunks[1:], chunks[0])
    assert total.usage_metadata == {"input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050,
                                    "input_token_details": {"cache_read": 800}}
    assert total.response_metadata["cost_usd"] == 0.25


def test_a_provider_reported_cost_becomes_cost_usd(model_for, fake_openai):
    fake_openai.script(Reply(cost=0.0123))
    reply = model_for("openrouter/anthropic/claude-haiku-4.5").invoke("hi")
    assert reply.response_metadata["cost_usd"] == 0.0123


def test_token_only_usage_has_no_cost_rather_than_a_guess(model_for, fake_openai):
    reply = model_for("openai/gpt-4o-mini").invoke("hi")
    assert reply.response_metadata["cost_usd"] is None
    assert reply.usage_metadata["total_tokens"] == 17


def test_price_per_million_prices_token_only_usage_with_cached_input_at_its_own_rate(model_for, fake_openai):
    fake_openai.script(Reply(prompt_tokens=1_000_000, cached_tokens=400_000, completion_tokens=100_000))
    price = {"input": 2.0, "output": 8.0, "cached_input": 0.5}
    reply = model_for("openai/gpt-4o-mini", price_per_million=price).invoke("hi")
    assert reply.response_metadata["cost_usd"] == pytest.approx(0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 8.0)


def test_a_providers_own_cost_wins_over_price_per_million(model_for, fake_openai):
    fake_openai.script(Reply(cost=0.5))
    reply = model_for("novita/deepseek/deepseek-v3", price_per_million=100.0).invoke("hi")
    assert reply.response_metadata["cost_usd"] == 0.5


def test_ollama_is_charged_nothing_rather_than_counted_unpriced(model_for, fake_openai):
    meter = SpendMeter(1.0)
    fake_openai.script(Reply(), Reply(content="no usage in stream", usage=False))
    model = model_for("ollama/llama3.1", spend_meter=meter)
    assert model.invoke("hi").response_metadata["cost_usd"] == 0.0
    chunks = list(model.stream("hi"))
    assert sum(chunks[1:], chunks[0]).response_metadata["cost_usd"] == 0.0
    assert (meter.calls, meter.unpriced_calls, meter.spent_usd) == (2, 0, 0.0)


def test_cost_usd_is_also_in_llm_output_for_callbacks_and_generate(model_for, fake_openai):
    class Capture(BaseCallbackHandler):
        def __init__(self) -> None:
            self.outputs: list[dict] = []

        def on_llm_end(self, response, **kwargs):
            self.outputs.append(response.llm_output)

    fake_openai.script(Reply(cost=0.02), Reply(cost=0.03))
    capture = Capture()
    result = model_for("openrouter/openai/gpt-4o-mini").generate(
        [[HumanMessage("one")], [HumanMessage("two")]], callbacks=[capture])
    assert sorted(output["cost_usd"] for output in capture.outputs) == [0.02, 0.03]
    assert result.llm_output["cost_usd"] == pytest.approx(0.05)


def test_the_meter_refuses_before_a_call_once_the_ceiling_is_reached(model_for, fake_openai):
    meter = SpendMeter(0.10)
    model = model_for("openrouter/anthropic/claude-haiku-4.5", spend_meter=meter)
    fake_openai.script(Reply(cost=0.04), Reply(cost=0.06))
    model.invoke("one")
    model.invoke("two")
    assert meter.spent_usd == pytest.approx(0.10)
    with pytest.raises(SpendCeilingError, match="refused before the call") as raised:
        model.invoke("three")
    assert raised.value.before and raised.value.dimension == "usd"
    assert len(fake_openai.completions) == 2


def test_the_call_that_crosses_the_ceiling_is_made_charged_and_then_raises(model_for, fake_openai):
    meter = SpendMeter(0.05)
    model = model_for("openrouter/anthropic/claude-haiku-4.5", spend_meter=meter)
    fake_openai.script(Reply(cost=0.04), Reply(cost=0.03))
    model.invoke("one")
    with pytest.raises(SpendCeilingError, match="crossed the spend ceiling") as raised:
        model.invoke("two")
    assert not raised.value.before
    assert meter.spent_usd == pytest.approx(0.07) and len(fake_openai.completions) == 2
    with pytest.raises(SpendCeilingError, match="before the call"):
        model.invoke("three")
    assert len(fake_openai.completions) == 2


def test_a_crossing_stream_is_delivered_whole_and_raises_at_its_end(model_for, fake_openai):
    meter = SpendMeter(0.01)
    fake_openai.script(Reply(content="all of it", cost=0.02))
    received = []
    with pytest.raises(SpendCeilingError):
        for chunk in model_for("openrouter/x/y", spend_meter=meter).stream("hi"):
            received.append(chunk.content)
    assert "".join(received) == "all of it" and meter.spent_usd == 0.02


def test_the_crossing_call_still_reaches_the_runs_usage_meter(model_for, fake_openai):
    meter = SpendMeter(0.01)
    fake_openai.script(Reply(cost=0.02, prompt_tokens=30, completion_tokens=10))
    with node_usage_scope(None, "worker") as usage, pytest.raises(SpendCeilingError):
        model_for("openrouter/x/y", spend_meter=meter).invoke("hi")
    assert (usage.calls, usage.tokens, usage.cost_usd) == (1, 40, 0.02)


def test_a_stream_broken_after_its_first_chunk_is_counted_as_a_call_of_unknown_cost(model_for, fake_openai):
    meter = SpendMeter(1.0)
    fake_openai.script(Reply(content="one two three", cost=0.5, reset_after_chunks=2))
    with pytest.raises(ProviderError):
        list(model_for("openrouter/x/y", spend_meter=meter).stream("hi"))
    assert (meter.calls, meter.unpriced_calls, meter.spent_usd) == (1, 1, 0.0)


def test_unpriced_calls_are_counted_and_never_charged(model_for, fake_openai):
    meter = SpendMeter(0.01)
    model = model_for("openai/gpt-4o-mini", spend_meter=meter)
    for _ in range(3):
        model.invoke("hi")
    assert (meter.calls, meter.unpriced_calls, meter.spent_usd) == (3, 3, 0.0)


def test_a_ceiling_on_unpriced_calls_turns_counting_into_enforcing(model_for, fake_openai):
    meter = SpendMeter(max_unpriced_calls=0)
    model = model_for("openai/gpt-4o-mini", spend_meter=meter)
    with pytest.raises(SpendCeilingError, match="crossed the unpriced calls ceiling"):
        model.invoke("first")
    with pytest.raises(SpendCeilingError, match="before the call"):
        model.invoke("second")
    assert len(fake_openai.completions) == 1 and meter.unpriced_calls == 1


def test_a_failed_call_is_not_charged(model_for, fake_openai, recorded):
    meter = SpendMeter(1.0)
    fake_openai.script(Status(400))
    with pytest.raises(ProviderError):
        model_for("openrouter/x/y", spend_meter=meter).invoke("hi")
    assert meter.calls == 0


def test_one_meter_shared_by_two_models_enforces_one_ceiling(model_for, fake_openai):
    meter = SpendMeter(0.05)
    author = model_for("openrouter/anthropic/claude-haiku-4.5", spend_meter=meter)
    reviewer = model_for("openai/gpt-4o-mini", spend_meter=meter, price_per_million=(10_000.0, 0.0))
    fake_openai.script(Reply(cost=0.03), Reply(prompt_tokens=3))
    author.invoke("write")
    with pytest.raises(SpendCeilingError, match="openai/gpt-4o-mini crossed"):
        reviewer.invoke("review")
    assert meter.spent_usd == pytest.approx(0.06)


def test_async_calls_are_metered_too(model_for, fake_openai):
    meter = SpendMeter(0.05)
    model = model_for("openrouter/x/y", spend_meter=meter)
    fake_openai.script(Reply(cost=0.03), Reply(cost=0.03))

    async def run() -> None:
        await model.ainvoke("one")
        with pytest.raises(SpendCeilingError):
            [c async for c in model.astream("two")]
        with pytest.raises(SpendCeilingError, match="before the call"):
            await model.ainvoke("three")

    asyncio.run(run())
    assert meter.spent_usd == pytest.approx(0.06) and len(fake_openai.completions) == 2


@pytest.mark.parametrize("value, expected", [
    (3.0, TokenPrice(3.0, 3.0)),
    ((1.0, 4.0), TokenPrice(1.0, 4.0)),
    ({"input": 1.0, "output": 4.0, "cached_input": 0.1}, TokenPrice(1.0, 4.0, 0.1)),
])
def test_a_price_may_be_one_rate_a_pair_or_a_mapping(value, expected):
    assert TokenPrice.coerce(value) == expected


@pytest.mark.parametrize("value", [-1.0, "cheap", (1.0,), {"input": 1.0}, float("inf")])
def test_a_nonsense_price_is_refused(value):
    with pytest.raises(ConfigurationError):
        TokenPrice.coerce(value)


@pytest.mark.parametrize("kwargs", [{"max_usd": -1}, {"max_usd": float("nan")}, {"max_unpriced_calls": -1}])
def test_a_nonsense_ceiling_is_refused(kwargs):
    with pytest.raises(ConfigurationError):
        SpendMeter(**kwargs)
