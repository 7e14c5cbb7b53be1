"""different_providers lives in core: it reads any registered backend, no gateway needed."""

from __future__ import annotations

import pytest

from grapharc.models import UnknownBackendError, different_providers, vendor_of
from grapharc.plugins import BackendInfo, hookimpl
from grapharc.testing import in_process_source, plugin_host


class Acme:
    """A third-party backend that routes to many vendors' models, like an aggregator."""

    @staticmethod
    @hookimpl
    def register_model_backends(register):
        register(BackendInfo(prefix="acme", factory="builtins:dict", vendor="acme"))


@pytest.fixture
def acme():
    with plugin_host(in_process_source(Acme, name="acme-backend"), installed=False):
        yield


@pytest.mark.parametrize("spec, vendor", [
    ("acme/anthropic/claude-haiku-4.5", "anthropic"),
    ("acme/meta-llama/llama-3.1-8b", "meta"),
    ("acme/gpt-4o-mini", "openai"),
    ("acme/house-model", "acme"),
    ("mock/gpt-4o", "grapharc"),
])
def test_the_vendor_is_the_named_author_else_the_family_else_the_backend(acme, spec, vendor):
    assert vendor_of(spec) == vendor


@pytest.mark.parametrize("author, reviewer, independent", [
    ("acme/anthropic/claude-haiku-4.5", "acme/openai/gpt-4o-mini", True),
    ("acme/anthropic/claude-haiku-4.5", "acme/claude-sonnet-5", False),
    ("acme/house-model", "acme/other-house-model", False),
    ("mock/author", "mock/reviewer", False),
    ("mock/author", "acme/openai/gpt-4o-mini", True),
])
def test_different_providers_compares_the_vendors_the_specs_reach(acme, author, reviewer, independent):
    assert different_providers(author, reviewer) is independent


def test_an_unregistered_backend_is_an_error_naming_it(acme):
    with pytest.raises(UnknownBackendError, match="nosuch"):
        different_providers("nosuch/openai/gpt-4o", "acme/openai/gpt-4o")
