"""different_providers: the vendor each spec reaches, so correlated reviewers are caught."""

from __future__ import annotations

import pytest

from grapharc.gateway import different_providers, vendor_of
from grapharc.models import UnknownBackendError


@pytest.mark.parametrize("spec, vendor", [
    ("openrouter/anthropic/claude-haiku-4.5", "anthropic"),
    ("openrouter/openai/gpt-4o-mini", "openai"),
    ("openrouter/meta-llama/llama-3.1-70b-instruct", "meta"),
    ("novita/deepseek/deepseek-v3", "deepseek"),
    ("claude-cli/claude-sonnet-5", "anthropic"),
    ("claude-cli/sonnet", "anthropic"),
    ("openai/gpt-4o-mini", "openai"),
    ("ollama/llama3.1", "meta"),
    ("ollama/qwen2.5:7b", "alibaba"),
    ("ollama/my-own-finetune", "ollama"),
    ("mock/claude", "grapharc"),
])
def test_the_vendor_is_the_model_author_else_its_family_else_the_backend(spec, vendor):
    assert vendor_of(spec) == vendor


def test_a_claude_cli_author_and_an_anthropic_model_over_openrouter_are_correlated():
    assert not different_providers("claude-cli/claude-sonnet-5", "openrouter/anthropic/claude-haiku-4.5")


def test_anthropic_and_openai_models_over_one_aggregator_are_independent():
    assert different_providers("openrouter/anthropic/claude-haiku-4.5", "openrouter/openai/gpt-4o-mini")


def test_the_same_vendor_reached_directly_and_through_an_aggregator_is_correlated():
    assert not different_providers("openai/gpt-4o-mini", "openrouter/openai/gpt-4o")
    assert not different_providers("ollama/llama3.1", "openrouter/meta-llama/llama-3.1-8b-instruct")


def test_a_bad_spec_is_an_error_not_a_guess():
    with pytest.raises(UnknownBackendError, match="openrouterr"):
        different_providers("openrouterr/anthropic/x", "openai/gpt-4o")
