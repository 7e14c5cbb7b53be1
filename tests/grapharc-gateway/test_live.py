"""Real providers, for a person with keys to run by hand: ``pytest -m live tests/grapharc-gateway``.

Deselected by default (they spend money and quota); each skips when its key,
endpoint or executable is missing.
"""

from __future__ import annotations

import os
import shutil

import pytest
from pydantic import BaseModel

from grapharc.gateway import SpendMeter, get_model
from grapharc.gateway.backends import OLLAMA
from grapharc.gateway.probe import endpoint_check

pytestmark = pytest.mark.live


def needs(variable: str) -> None:
    if not os.environ.get(variable):
        pytest.skip(f"{variable} is not set")


class Capital(BaseModel):
    country: str
    capital: str


def test_openrouter_reports_its_own_cost_for_a_real_call():
    needs("OPENROUTER_API_KEY")
    meter = SpendMeter(0.05)
    reply = get_model("openrouter/openai/gpt-4o-mini", spend_meter=meter, max_tokens=16).invoke(
        "Reply with the single word: ready")
    assert reply.usage_metadata["total_tokens"] > 0
    assert isinstance(reply.response_metadata["cost_usd"], float) and meter.unpriced_calls == 0


def test_openrouter_structured_output_from_a_real_model():
    needs("OPENROUTER_API_KEY")
    answer = get_model("openrouter/openai/gpt-4o-mini", max_tokens=64).with_structured_output(Capital).invoke(
        "What is the capital of France?")
    assert answer.capital.lower() == "paris"


def test_openai_reports_tokens_and_no_price_unless_given_one():
    needs("OPENAI_API_KEY")
    reply = get_model("openai/gpt-4o-mini", max_tokens=16).invoke("Reply with the single word: ready")
    assert reply.usage_metadata["total_tokens"] > 0 and reply.response_metadata["cost_usd"] is None


def test_a_local_ollama_answers_for_free():
    if not endpoint_check(OLLAMA.base_url(), None, timeout=1.0)["ok"]:
        pytest.skip("no Ollama server answers at " + OLLAMA.base_url())
    model = os.environ.get("GRAPHARC_LIVE_OLLAMA_MODEL", "llama3.1")
    reply = get_model(f"ollama/{model}").invoke("Reply with the single word: ready")
    assert reply.response_metadata["cost_usd"] == 0.0


def test_claude_cli_completes_without_tools_on_the_subscription():
    if shutil.which("claude") is None:
        pytest.skip("claude is not on PATH")
    reply = get_model("claude-cli/haiku").invoke("Reply with the single word: ready")
    assert "ready" in str(reply.content).lower()
    assert reply.usage_metadata["total_tokens"] > 0
