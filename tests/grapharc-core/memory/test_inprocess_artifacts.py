"""InMemoryArtifactStore keeps the ArtifactStore contract, and Artifact refuses bad records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from grapharc.memory.artifacts import Artifact, ArtifactStore
from grapharc.memory.claims import InvalidClaimError
from grapharc.memory.inprocess_artifacts import InMemoryArtifactStore
from grapharc.testing.artifact_store_kit import PROVENANCE, ArtifactStoreConformance


class TestInMemoryArtifactStoreConformance(ArtifactStoreConformance):
    """Runs the conformance kit against the in-process store."""

    def make_store(self, tmp_path: Path) -> InMemoryArtifactStore:
        return InMemoryArtifactStore()

    def damage_blob(self, store: ArtifactStore, artifact: Artifact) -> None:
        assert isinstance(store, InMemoryArtifactStore)
        store._blobs[artifact.sha256] = b"tampered"


def test_identical_bytes_are_kept_once() -> None:
    store = InMemoryArtifactStore()
    store.put("a.txt", b"same bytes", PROVENANCE)
    store.put("b.txt", b"same bytes", PROVENANCE)
    assert len(store._blobs) == 1


def artifact_fields(**changes: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "name": "a.txt", "version": 1, "size": 0, "sha256": "0" * 64, "provenance": PROVENANCE,
        "created_at": datetime(2024, 5, 1, tzinfo=UTC)}
    return fields | changes


@pytest.mark.parametrize(("change", "field"), [
    ({"version": 0}, "version"), ({"size": -1}, "size"), ({"sha256": "ABC"}, "sha256"),
    ({"name": " "}, "name"), ({"media_type": "text"}, "media_type"),
    ({"created_at": datetime(2024, 5, 1)}, "created_at"), ({"provenance": None}, "provenance"),
])
def test_an_artifact_record_refuses_a_bad_field_naming_it(change: dict[str, object],
                                                          field: str) -> None:
    with pytest.raises((ValidationError, InvalidClaimError), match=field):
        Artifact.model_validate(artifact_fields(**change))


def test_created_at_is_kept_in_utc() -> None:
    local = datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    artifact = Artifact.model_validate(artifact_fields(created_at=local))
    assert artifact.created_at == local and artifact.created_at.tzinfo == UTC
