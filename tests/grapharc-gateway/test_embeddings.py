"""The openai: embedder against an OpenAI-compatible server the test starts on 127.0.0.1: chosen by a
spec, its key read from the variable the spec names (never part of the spec), and usable as the
long-term store's vector channel."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from gateway_fakes import FakeOpenAI, Status

from grapharc.errors import ConfigurationError
from grapharc.gateway.embeddings import OPENAI_BASE_URL, OpenAIEmbedder
from grapharc.gateway.errors import MissingCredentialError, ProviderError
from grapharc.memory.embedders import open_embedder
from grapharc.memory.longterm import open_long_term_store

KEY = "sk-test-embeddings-0123"


@pytest.fixture
def keyed_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("EMBEDDINGS_KEY", KEY)
    with FakeOpenAI(required_key=KEY) as server:
        yield server


def spec_for(server: FakeOpenAI, model: str = "fake-embed") -> str:
    return f"openai:{model}?base_url={server.base_url}&key_env=EMBEDDINGS_KEY"


def test_an_openai_spec_embeds_through_the_endpoint_with_the_key_from_the_named_variable(
        keyed_server: FakeOpenAI) -> None:
    embedder = open_embedder(spec_for(keyed_server))
    assert embedder.embed(["a car", "weaving loom loom"]) == [[1.0, 0.0], [0.0, 3.0]]
    (request,) = keyed_server.embeddings
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"model": "fake-embed", "input": ["a car", "weaving loom loom"],
                            "encoding_format": "float"}
    assert KEY not in repr(embedder) and KEY not in spec_for(keyed_server)


def test_the_long_term_store_finds_items_by_meaning_through_the_endpoint(keyed_server: FakeOpenAI) -> None:
    store = open_long_term_store("memory:", embedder=spec_for(keyed_server))
    store.put(("docs",), "automobile", {"text": "an automobile"})
    store.put(("docs",), "loom", {"text": "weaving"})
    assert [item.key for item in store.search(("docs",), query="car")] == ["automobile"]
    assert [request.body["input"] for request in keyed_server.embeddings if request.body] == [
        ["an automobile"], ["weaving"], ["car"]]


def test_dimensions_are_asked_of_the_model_when_the_spec_gives_them(keyed_server: FakeOpenAI) -> None:
    open_embedder(spec_for(keyed_server) + "&dimensions=2").embed(["car"])
    assert keyed_server.embeddings[0].body["dimensions"] == 2  # type: ignore[index]


def test_a_missing_key_is_named_before_anything_is_sent(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(MissingCredentialError, match="NO_SUCH_KEY is not set"):
        open_embedder(f"openai:fake-embed?base_url={fake_openai.base_url}&key_env=NO_SUCH_KEY")
    assert fake_openai.requests == []


def test_without_a_base_url_the_spec_means_openais_endpoint_and_sends_nothing_until_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    embedder = open_embedder("openai:text-embedding-3-small")
    assert isinstance(embedder, OpenAIEmbedder) and embedder.base_url == OPENAI_BASE_URL


def test_a_refusing_endpoint_is_a_provider_error_naming_the_model_and_endpoint(
        keyed_server: FakeOpenAI) -> None:
    keyed_server.script(Status(401, "Incorrect API key provided"))
    with pytest.raises(ProviderError, match=r"openai:fake-embed at http://127\.0\.0\.1:\d+/v1: HTTP 401"):
        open_embedder(spec_for(keyed_server)).embed(["car"])


@pytest.mark.parametrize(("argument", "named"), [
    ("", "names no model"),
    ("m?colour=red", "unknown option 'colour'"),
    ("m?base_url=ftp://x", "not an http(s) URL"),
    ("m?dimensions=wide", "dimensions='wide'"),
    ("m?timeout=-1", "timeout='-1'"),
    ("m?key_env=A&key_env=B", "option 'key_env' twice"),
    ("m?junk", "cannot be read"),
])
def test_a_bad_openai_spec_is_refused_naming_what_is_wrong(argument: str, named: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(named)):
        open_embedder(f"openai:{argument}")
