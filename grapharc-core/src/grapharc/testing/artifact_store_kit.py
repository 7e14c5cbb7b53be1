"""A conformance kit for ``ArtifactStore`` implementations, ours or a third party's.

Subclass ``ArtifactStoreConformance`` in a class pytest collects (``Test...``),
override ``make_store(tmp_path)`` and ``damage_blob(store, artifact)`` (change the
stored bytes of one version behind the store's back), and every ``test_`` method
here runs against your store. Set ``durable = True`` to also prove artifacts
survive ``close()`` and reopening with ``reopen_store(tmp_path)``, which defaults
to ``make_store(tmp_path)``.

    class TestMyStore(ArtifactStoreConformance):
        durable = True

        def make_store(self, tmp_path):
            return MyStore(tmp_path / "memory.db")

        def damage_blob(self, store, artifact):
            ...
"""

from __future__ import annotations

import hashlib
import re
from abc import abstractmethod
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from grapharc.memory.artifacts import (
    DEFAULT_MEDIA_TYPE,
    Artifact,
    ArtifactCorruptedError,
    ArtifactNotFoundError,
    ArtifactStore,
    ArtifactStoreClosedError,
    InvalidArtifactError,
)
from grapharc.memory.claims import Provenance
from grapharc.testing.store_kit import StoreKit, race

OBSERVED_AT = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)
PROVENANCE = Provenance(source="artifact-kit", observed_at=OBSERVED_AT, run_id="run-1")
FIVE_MB = bytes(range(256)) * (5 * 1024 * 1024 // 256)


class ArtifactStoreConformance(StoreKit[ArtifactStore]):
    """The ``ArtifactStore`` contract as pytest tests; subclass it and implement the two hooks."""

    @abstractmethod
    def damage_blob(self, store: ArtifactStore, artifact: Artifact) -> None:
        """Change the stored bytes of ``artifact`` without going through the store's API."""

    def test_store_satisfies_the_artifact_store_protocol(self, store: ArtifactStore) -> None:
        assert isinstance(store, ArtifactStore)

    def test_put_records_size_digest_media_type_and_provenance(self, store: ArtifactStore) -> None:
        data = b"# Report\nlatency is back to normal\n"
        stored = store.put("report.md", data, PROVENANCE, media_type="text/markdown")
        assert (stored.name, stored.version, stored.media_type) == ("report.md", 1, "text/markdown")
        assert stored.size == len(data)
        assert stored.sha256 == hashlib.sha256(data).hexdigest()
        assert stored.provenance == PROVENANCE
        assert stored.created_at.utcoffset() is not None
        assert store.get("report.md") == (stored, data)

    def test_media_type_defaults_to_octet_stream_and_keeps_its_parameters(
        self, store: ArtifactStore
    ) -> None:
        assert store.put("blob", b"\x00\x01", PROVENANCE).media_type == DEFAULT_MEDIA_TYPE
        typed = store.put("page.html", b"<p>hi</p>", PROVENANCE, "text/html; charset=utf-8")
        assert store.get("page.html")[0].media_type == typed.media_type == "text/html; charset=utf-8"

    def test_each_put_appends_a_version_and_older_ones_stay_readable(
        self, store: ArtifactStore
    ) -> None:
        first = store.put("notes.txt", b"first draft", PROVENANCE)
        second = store.put("notes.txt", b"second draft", PROVENANCE)
        third = store.put("notes.txt", b"first draft", PROVENANCE)
        assert [a.version for a in (first, second, third)] == [1, 2, 3]
        assert store.versions("notes.txt") == [first, second, third]
        assert store.get("notes.txt") == (third, b"first draft")
        assert store.get("notes.txt", version=1) == (first, b"first draft")
        assert store.get("notes.txt", version=2) == (second, b"second draft")
        assert len({first.id, second.id, third.id}) == 3

    @pytest.mark.parametrize("data", [b"", FIVE_MB, bytes(range(256))],
                             ids=["empty", "five-megabytes", "every-byte-value"])
    def test_bytes_round_trip_exactly(self, store: ArtifactStore, data: bytes) -> None:
        stored = store.put("data.bin", data, PROVENANCE)
        artifact, read = store.get("data.bin")
        assert artifact == stored and artifact.size == len(data)
        assert read == data

    def test_list_shows_the_latest_version_of_every_name(self, store: ArtifactStore) -> None:
        store.put("b.txt", b"b1", PROVENANCE)
        latest_b = store.put("b.txt", b"b2", PROVENANCE)
        only_a = store.put("a.txt", b"a1", PROVENANCE)
        assert store.list() == [only_a, latest_b]

    @pytest.mark.parametrize("provenance", [None, {"source": "somewhere"}, "run-1"])
    def test_a_put_without_provenance_is_refused_naming_the_artifact(
        self, store: ArtifactStore, provenance: Any
    ) -> None:
        with pytest.raises(InvalidArtifactError, match=re.escape("'report.md' has no provenance")):
            store.put("report.md", b"data", provenance)
        assert store.list() == []

    @pytest.mark.parametrize(("name", "data", "media_type", "match"), [
        ("", b"data", DEFAULT_MEDIA_TYPE, "name '' is empty"),
        ("  ", b"data", DEFAULT_MEDIA_TYPE, "name '  ' is empty"),
        ("notes.txt", "text, not bytes", DEFAULT_MEDIA_TYPE, "'notes.txt' must be bytes, not str"),
        ("notes.txt", b"data", "markdown", "'notes.txt' has media type 'markdown'"),
    ])
    def test_a_malformed_put_is_refused_and_stores_nothing(
        self, store: ArtifactStore, name: str, data: Any, media_type: str, match: str
    ) -> None:
        with pytest.raises(InvalidArtifactError, match=re.escape(match)) as refused:
            store.put(name, data, PROVENANCE, media_type=media_type)
        assert refused.value.hint
        assert store.list() == []

    def test_unknown_names_and_versions_raise_not_found_naming_them(
        self, store: ArtifactStore
    ) -> None:
        with pytest.raises(ArtifactNotFoundError, match=re.escape("no artifact 'missing.txt'")):
            store.get("missing.txt")
        with pytest.raises(ArtifactNotFoundError, match=re.escape("no artifact 'missing.txt'")):
            store.versions("missing.txt")
        store.put("notes.txt", b"v1", PROVENANCE)
        for version in (0, 2, -1):
            with pytest.raises(ArtifactNotFoundError,
                               match=re.escape(f"no version {version} of artifact 'notes.txt'")):
                store.get("notes.txt", version=version)

    def test_changed_bytes_are_reported_as_corruption_naming_the_blob(
        self, store: ArtifactStore
    ) -> None:
        damaged = store.put("report.md", b"the original words", PROVENANCE)
        intact = store.put("other.md", b"untouched", PROVENANCE)
        self.damage_blob(store, damaged)
        with pytest.raises(ArtifactCorruptedError, match=damaged.sha256) as corrupt:
            store.get("report.md")
        assert "artifact 'report.md' is corrupt" in str(corrupt.value)
        assert corrupt.value.artifact == damaged
        assert store.get("other.md") == (intact, b"untouched")

    def test_concurrent_puts_to_one_name_get_distinct_versions(self, store: ArtifactStore) -> None:
        race(8, lambda i: store.put("shared.txt", f"writer {i}".encode(), PROVENANCE))
        versions = store.versions("shared.txt")
        assert [a.version for a in versions] == list(range(1, 9))
        assert sorted(store.get("shared.txt", a.version)[1] for a in versions) == sorted(
            f"writer {i}".encode() for i in range(8))

    def test_a_closed_store_refuses_every_call(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("notes.txt", b"v1", PROVENANCE)
        store.close()
        store.close()
        calls = [lambda: store.put("notes.txt", b"v2", PROVENANCE), lambda: store.get("notes.txt"),
                 lambda: store.versions("notes.txt"), store.list]
        for call in calls:
            with pytest.raises(ArtifactStoreClosedError, match="closed"):
                call()

    def test_artifacts_survive_closing_and_reopening(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("the store under test is not durable")
        store = self.make_store(tmp_path)
        first = store.put("notes.txt", b"v1", PROVENANCE, media_type="text/plain")
        second = store.put("notes.txt", FIVE_MB, PROVENANCE)
        store.close()
        reopened = self.reopen_store(tmp_path)
        try:
            assert reopened.versions("notes.txt") == [first, second]
            assert reopened.get("notes.txt", 1) == (first, b"v1")
            assert reopened.get("notes.txt") == (second, FIVE_MB)
            assert reopened.put("notes.txt", b"v3", PROVENANCE).version == 3
        finally:
            reopened.close()
