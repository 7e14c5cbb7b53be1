"""OpenRouter routing: fallback chains and provider preferences reach the request body as given."""

from __future__ import annotations

import pytest
from gateway_fakes import Reply

from grapharc.errors import ConfigurationError
from grapharc.gateway import ProviderRouting, get_model
from grapharc.gateway.openrouter import DEFAULT_MAX_TOKENS


@pytest.fixture
def openrouter(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    monkeypatch.setenv("OPENROUTER_BASE_URL", fake_openai.base_url)

    def build(**kwargs):
        return get_model("openrouter/anthropic/claude-haiku-4.5", **kwargs)
    return build


def test_fallback_models_become_openrouters_models_list_primary_first(openrouter, fake_openai):
    openrouter(fallback_models=["openai/gpt-4o-mini", "google/gemini-2.5-flash"]).invoke("hi")
    body = fake_openai.completions[-1].body
    assert body["model"] == "anthropic/claude-haiku-4.5"
    assert body["models"] == ["anthropic/claude-haiku-4.5", "openai/gpt-4o-mini", "google/gemini-2.5-flash"]


def test_provider_order_sort_and_max_price_pass_through(openrouter, fake_openai):
    provider = {"order": ["anthropic", "amazon-bedrock"], "sort": "price",
                "max_price": {"prompt": 1.0, "completion": 5.0}, "allow_fallbacks": False}
    openrouter(provider=provider).invoke("hi")
    assert fake_openai.completions[-1].body["provider"] == provider


def test_streamed_calls_carry_the_routing_too(openrouter, fake_openai):
    list(openrouter(fallback_models=["openai/gpt-4o-mini"],
                    provider=ProviderRouting(sort="throughput")).stream("hi"))
    body = fake_openai.completions[-1].body
    assert body["models"][1:] == ["openai/gpt-4o-mini"] and body["provider"] == {"sort": "throughput"}


def test_every_request_asks_for_usage_accounting_so_cost_is_reported(openrouter, fake_openai):
    openrouter().invoke("hi")
    body = fake_openai.completions[-1].body
    assert body["usage"] == {"include": True}
    assert "models" not in body and "provider" not in body


def test_the_model_that_actually_served_a_fallback_is_reported(openrouter, fake_openai):
    fake_openai.script(Reply(model="openai/gpt-4o-mini", cost=0.001))
    reply = openrouter(fallback_models=["openai/gpt-4o-mini"]).invoke("hi")
    assert reply.response_metadata["model_name"] == "openai/gpt-4o-mini"


def test_max_tokens_defaults_to_a_modest_reservation(openrouter, fake_openai):
    openrouter().invoke("hi")
    openrouter(max_tokens=64).invoke("hi")
    assert [r.body["max_tokens"] for r in fake_openai.completions] == [DEFAULT_MAX_TOKENS, 64]


def test_caller_extra_body_is_kept_beside_the_routing(openrouter, fake_openai):
    openrouter(extra_body={"transforms": ["middle-out"]}).invoke("hi")
    body = fake_openai.completions[-1].body
    assert body["transforms"] == ["middle-out"] and body["usage"] == {"include": True}


@pytest.mark.parametrize("provider", [{"sort": "cheapest"}, {"ordre": ["anthropic"]}])
def test_a_mistyped_preference_is_refused_naming_it(openrouter, provider):
    with pytest.raises(ConfigurationError, match=r"cheapest|ordre"):
        openrouter(provider=provider)
