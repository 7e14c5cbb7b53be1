"""Whatever string arrives as a model spec or store URI, the answer is a GraphARCError or a result."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.errors import GraphARCError
from grapharc.models import resolve_backend
from grapharc.stores import open_store
from grapharc.testing import plugin_host

pytestmark = pytest.mark.smoke

ANY_TEXT = st.one_of(st.text(max_size=60), st.binary(max_size=20).map(lambda b: b.decode("latin-1")),
                     st.just("a" * 10_000), st.just("mock/" + "/" * 500))


@pytest.fixture(scope="module", autouse=True)
def core_only():
    with plugin_host(installed=False):
        yield


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_any_model_spec_either_resolves_or_raises_a_named_error(spec):
    try:
        resolved = resolve_backend(spec)
    except GraphARCError as exc:
        assert str(exc)
    else:
        assert resolved.backend == "mock" and resolved.model


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT.filter(lambda s: not s.lower().startswith(("sqlite:", "memory:"))))
def test_any_store_uri_either_opens_or_raises_a_named_error(uri):
    with pytest.raises(GraphARCError):
        open_store(uri)
