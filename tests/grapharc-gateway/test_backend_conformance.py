"""All five gateway backends pass core's model-backend conformance kit (wire ones over real HTTP)."""

from __future__ import annotations

import pytest
from gateway_fakes import FakeOpenAI

from grapharc.gateway.hooks import CLI_CAPABILITIES, WIRE_CAPABILITIES
from grapharc.models import get_model
from grapharc.testing.backend_kit import ModelBackendConformance


class WireConformance(ModelBackendConformance):
    capabilities = WIRE_CAPABILITIES
    spec = ""

    @pytest.fixture(autouse=True)
    def _server(self, fake_openai: FakeOpenAI) -> None:
        self.server = fake_openai

    def make_model(self):
        return get_model(self.spec, base_url=self.server.base_url, api_key="conformance")


class TestOpenAIBackend(WireConformance):
    spec = "openai/gpt-4o-mini"


class TestOpenRouterBackend(WireConformance):
    spec = "openrouter/anthropic/claude-haiku-4.5"


class TestOllamaBackend(WireConformance):
    spec = "ollama/llama3.1"


class TestNovitaBackend(WireConformance):
    spec = "novita/deepseek/deepseek-v3"


class TestClaudeCLIBackend(ModelBackendConformance):
    capabilities = CLI_CAPABILITIES

    @pytest.fixture(autouse=True)
    def _claude(self, fake_claude) -> None:
        """The fake claude is on PATH for every test of this class."""

    def make_model(self):
        return get_model("claude-cli/sonnet")
