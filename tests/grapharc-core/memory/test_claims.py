"""Entity normalisation and the Claim / Provenance data contract."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from grapharc.errors import GraphARCError
from grapharc.memory.claims import (
    Claim,
    InvalidClaimError,
    InvalidEntityError,
    Provenance,
    _folded_and_trimmed,
    _is_edge_noise,
    normalise_entity,
)

WHEN = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def provenance(**overrides: object) -> dict[str, object]:
    """A valid provenance mapping with some fields replaced."""
    return {"source": "https://example.org/page", "observed_at": WHEN, **overrides}


@pytest.mark.parametrize(
    ("variant", "key"),
    [
        ("Tokyo", "tokyo"),
        ("  TOKYO.  ", "tokyo"),
        ("“Tokyo”", "tokyo"),
        ("Ｔｏｋｙｏ", "tokyo"),
        ("New \t York", "new york"),
        ("Straße", "strasse"),
        ("ﬁle", "file"),
        ("Tokyo\u200b", "tokyo"),
        ("「東京」。", "東京"),
        ("हिन्दी।", "हिन्दी"),
        ("U.S.A.", "u.s.a"),
    ],
)
def test_spelling_variants_normalise_to_one_key(variant: str, key: str) -> None:
    assert normalise_entity(variant) == key


@pytest.mark.parametrize(
    ("first", "second"),
    [("東京", "北京"), ("Москва", "Минск"), ("C#", "C"), ("C++", "C"), ("50%", "50")],
)
def test_distinct_entities_keep_distinct_keys(first: str, second: str) -> None:
    assert normalise_entity(first) != normalise_entity(second)


def test_non_latin_entities_keep_their_letters() -> None:
    assert normalise_entity("東京") == "東京"
    assert normalise_entity("МОСКВА") == "москва"
    assert normalise_entity("القاهرة") == "القاهرة"


@pytest.mark.parametrize("text", ["", "   ", "...", "「」", "\u200b", "!?"])
def test_text_without_an_entity_is_rejected_naming_the_text(text: str) -> None:
    with pytest.raises(InvalidEntityError, match="normalises to an empty key") as raised:
        normalise_entity(text)
    assert repr(text) in str(raised.value)
    assert isinstance(raised.value, GraphARCError)


def test_claim_gets_a_uuid4_hex_id_when_none_is_given() -> None:
    first = Claim(subject="Tokyo", predicate="is", object="a city", provenance=provenance())
    second = Claim(subject="Tokyo", predicate="is", object="a city", provenance=provenance())
    assert len(first.id) == 32
    int(first.id, 16)
    assert first.id != second.id


def test_claim_requires_provenance() -> None:
    with pytest.raises(InvalidClaimError, match="provenance"):
        Claim(subject="Tokyo", predicate="is", object="a city")  # type: ignore[call-arg]


@pytest.mark.parametrize("missing", ["source", "observed_at"])
def test_provenance_requires_source_and_observation_time(missing: str) -> None:
    fields = provenance()
    del fields[missing]
    with pytest.raises(InvalidClaimError, match=missing):
        Provenance.model_validate(fields)


def test_observation_time_must_be_timezone_aware() -> None:
    with pytest.raises(InvalidClaimError, match="timezone"):
        Provenance.model_validate(provenance(observed_at=datetime(2024, 5, 1, 12, 0)))


def test_observation_time_is_kept_in_utc() -> None:
    tokyo_time = datetime(2024, 5, 1, 21, 0, tzinfo=timezone(timedelta(hours=9)))
    kept = Provenance.model_validate(provenance(observed_at=tokyo_time)).observed_at
    assert kept == tokyo_time
    assert kept.tzinfo is UTC
    assert kept.hour == 12


@pytest.mark.parametrize("field", ["id", "predicate", "object"])
def test_blank_claim_fields_are_rejected_naming_the_field(field: str) -> None:
    fields = {"subject": "Tokyo", "predicate": "is", "object": "a city", field: "  "}
    with pytest.raises(InvalidClaimError, match=f"{field} must not be empty"):
        Claim(provenance=Provenance.model_validate(provenance()), **fields)


@pytest.mark.parametrize(("field", "value"), [("source", " "), ("run_id", "")])
def test_blank_provenance_fields_are_rejected_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(InvalidClaimError, match=f"provenance.{field} must not be empty"):
        Provenance.model_validate(provenance(**{field: value}))


def test_a_subject_that_names_no_entity_is_rejected() -> None:
    with pytest.raises(InvalidClaimError, match="normalises to an empty key"):
        Claim(subject="...", predicate="is", object="x", provenance=provenance())


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(InvalidClaimError, match="confidence"):
        Claim(
            subject="Tokyo",
            predicate="is",
            object="a city",
            provenance=provenance(),
            confidence=0.9,  # type: ignore[call-arg]
        )
    with pytest.raises(InvalidClaimError, match="author"):
        Provenance.model_validate(provenance(author="me"))


def test_claims_are_immutable() -> None:
    claim = Claim(subject="Tokyo", predicate="is", object="a city", provenance=provenance())
    with pytest.raises(ValidationError, match="frozen"):
        claim.object = "a prefecture"  # type: ignore[misc]


def test_claim_survives_a_json_round_trip() -> None:
    claim = Claim(
        subject="東京",
        predicate="population",
        object="14 million",
        provenance=provenance(run_id="run-3"),
        superseded_by="abc",
    )
    assert Claim.model_validate_json(claim.model_dump_json()) == claim


def test_subject_key_is_the_normalised_subject() -> None:
    claim = Claim(subject=" “TOKYO” ", predicate="is", object="x", provenance=provenance())
    assert claim.subject == " “TOKYO” "
    assert claim.subject_key == "tokyo"


def _unicode_path(text: str) -> str:
    """What normalise_entity's general path makes of ``text`` before collapsing whitespace."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    chars = list(folded)
    while chars and _is_edge_noise(chars[0]):
        chars.pop(0)
    while chars and _is_edge_noise(chars[-1]):
        chars.pop()
    return "".join(chars)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_shortcut_folds_and_trims_as_the_unicode_path_does(text: str) -> None:
    assert _folded_and_trimmed(text) == _unicode_path(text)


@pytest.mark.parametrize("code", range(128))
def test_every_ascii_character_at_an_edge_is_kept_or_trimmed_as_unicode_says(code: int) -> None:
    text = f"{chr(code)}Ada{chr(code)}"
    assert _folded_and_trimmed(text) == _unicode_path(text)
