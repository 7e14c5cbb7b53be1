"""Embedders chosen by spec: core's local hashing: embedder, the errors a bad spec gets, a plugin's
embedder found by its scheme, and an item store that cannot take one refused by name."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.embedders import EmbedderSpecError, open_embedder
from grapharc.memory.hashing_embedder import DEFAULT_DIMENSIONS, HashingEmbedder
from grapharc.memory.longterm import open_long_term_store
from grapharc.memory.retrieval import cosine
from grapharc.plugins import EmbedderInfo, StoreInfo, UnknownNameError, hookimpl
from grapharc.stores.uris import StoreURIError
from grapharc.testing import in_process_source, plugin_host


def test_hashing_vectors_count_terms_so_shared_words_point_alike() -> None:
    embedder = HashingEmbedder(64)
    once, twice, mixed = embedder.embed(["Engine", "engine ENGINE", "the engine and the loom"])
    assert twice == [2 * x for x in once] and sum(map(abs, once)) == 1.0
    assert cosine(once, mixed) > 0.3


def test_hashing_vectors_are_the_same_in_another_process() -> None:
    here = HashingEmbedder(32).embed(["the analytical engine"])[0]
    there = subprocess.run(
        [sys.executable, "-c", "import json; from grapharc.memory.hashing_embedder import HashingEmbedder; "
                               "print(json.dumps(HashingEmbedder(32).embed(['the analytical engine'])[0]))"],
        capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(there.stdout) == here


@pytest.mark.parametrize(("spec", "dimensions"), [
    ("hashing", DEFAULT_DIMENSIONS), ("hashing:", DEFAULT_DIMENSIONS), ("hashing:12", 12)])
def test_a_hashing_spec_gives_its_dimensions(spec: str, dimensions: int) -> None:
    embedder = open_embedder(spec)
    assert isinstance(embedder, HashingEmbedder) and len(embedder.embed(["x"])[0]) == dimensions


@pytest.mark.parametrize("spec", ["hashing:0", "hashing:wide", "hashing:70000", "hashing:-3"])
def test_a_hashing_spec_without_a_usable_number_is_refused_naming_it(spec: str) -> None:
    with pytest.raises(ConfigurationError, match=f"embedder spec '{spec}' does not give a number"):
        open_embedder(spec)


@pytest.mark.parametrize("spec", ["", ":256", 256])
def test_a_spec_without_a_scheme_is_refused(spec: Any) -> None:
    with pytest.raises(EmbedderSpecError, match="not of the form <scheme>:<argument>"):
        open_embedder(spec)


def test_an_unknown_scheme_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown embedder scheme 'nosuch'; known: .*hashing"):
        open_embedder("nosuch:1")


class Plugin:
    """A plugin with an embedder (``echo:``) and a broken one (``broken:``)."""

    @staticmethod
    @hookimpl
    def register_embedders(register: Any) -> None:
        register(EmbedderInfo(scheme="echo", factory=lambda argument: HashingEmbedder(len(argument) or 1)))
        register(EmbedderInfo(scheme="broken", factory=lambda argument: object()))


def test_a_plugins_embedder_is_found_by_its_scheme_and_one_that_is_not_an_embedder_is_refused() -> None:
    with plugin_host(in_process_source(Plugin, name="embedding-plugin")):
        assert len(open_embedder("echo:abc").embed(["x"])[0]) == 3
        with pytest.raises(EmbedderSpecError, match="embedding-plugin's embedder 'broken' returned a object"):
            open_embedder("broken:")


def test_an_item_store_whose_factory_takes_no_embedder_is_refused_by_name() -> None:
    def plain(location: str, kind: str) -> Any:
        raise AssertionError("not called when the option cannot be taken")

    class Plain:
        @staticmethod
        @hookimpl
        def register_stores(register: Any) -> None:
            register(StoreInfo(scheme="plain", kinds=frozenset({"items"}), factory=plain))

    with plugin_host(in_process_source(Plain, name="plain-store")), \
            pytest.raises(StoreURIError, match="plain-store's plain: items store takes no embedder option"):
        open_long_term_store("plain:", embedder="hashing:8")
