"""Claim and artifact ids are version 7 UUIDs: time first, so a store's id index grows at its end."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from itertools import pairwise

import pytest

import grapharc.memory.ids as ids
from grapharc.memory.artifacts import Artifact
from grapharc.memory.claims import Claim, Provenance

PROVENANCE = Provenance(source="test", observed_at=datetime(2026, 12, 2, tzinfo=UTC))


def test_an_id_is_a_version_7_uuid_in_32_hex_digits_led_by_its_millisecond() -> None:
    made = ids.time_ordered_id()
    parsed = uuid.UUID(made)
    assert len(made) == 32 and made == parsed.hex
    assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)


def test_ids_made_in_later_milliseconds_sort_after_whatever_their_random_bits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    groups = []
    for millisecond in (1_000, 1_001, 1_002, 2_000_000_000_000):
        monkeypatch.setattr(ids.time, "time_ns", lambda m=millisecond: m * 1_000_000 + 999_999)
        groups.append([ids.time_ordered_id() for _ in range(50)])
        assert {int(made[:12], 16) for made in groups[-1]} == {millisecond}
    assert all(max(earlier) < min(later) for earlier, later in pairwise(groups))


def test_ids_made_in_one_millisecond_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids.time, "time_ns", lambda: 5_000_000)
    assert len({ids.time_ordered_id() for _ in range(10_000)}) == 10_000


def test_claims_and_artifacts_get_time_ordered_ids_by_default() -> None:
    claim = Claim(subject="s", predicate="p", object="o", provenance=PROVENANCE)
    assert uuid.UUID(claim.id).version == 7
    assert Claim(id="mine", subject="s", predicate="p", object="o", provenance=PROVENANCE).id == "mine"
    artifact_id = Artifact.model_fields["id"].default_factory()  # type: ignore[misc]
    assert uuid.UUID(artifact_id).version == 7
