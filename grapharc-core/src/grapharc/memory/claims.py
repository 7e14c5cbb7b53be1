"""Claims with provenance, the ``ClaimStore`` contract every backend keeps, and its errors.

A claim is one (subject, predicate, object) fact plus where it came from. Facts
are never destroyed: a correction is recorded by *supersession*, which links
the old claim to its replacement, so a later run can see what was replaced and
why. Subjects are matched by ``normalise_entity``, which is Unicode-aware so
that 東京 and 北京 stay two entities instead of collapsing to one empty key. A
store keeps a claim only if its text is at most ``MAX_CLAIM_BYTES`` (``require_claim``,
which every store calls on what it is handed); one written before the limit still reads.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any, NamedTuple, Protocol, runtime_checkable

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from grapharc.errors import GraphARCError
from grapharc.memory.ids import time_ordered_id

# Punctuation that ends or starts real names ("C#", "F#", "50%", "AT&T", "@user", "*nix"),
# so stripping it at the edges would merge distinct entities.
_NAME_MARKS = frozenset("#%&*@")


class InvalidEntityError(GraphARCError, ValueError):
    """Text that cannot name an entity because it normalises to an empty key."""


class InvalidClaimError(GraphARCError):
    """A claim or its provenance was given a value it cannot hold, or a store something not a claim."""

    hint = "a claim needs subject, predicate and object text and a provenance with source and observed_at"


MAX_CLAIM_BYTES = 64 * 1024
"""The most text one claim may hold, in UTF-8 bytes over all its fields (id, subject, predicate,
object, source, run id): a claim is one fact, and every search scores and shows it. A longer text
belongs in the artifact store, with a claim that names it."""


class ClaimTooLargeError(InvalidClaimError):
    """A claim whose text is over ``MAX_CLAIM_BYTES``."""

    hint = ("keep the long text in the artifact store and claim a reference to it (its id), or "
            "split the fact into several claims")


class ClaimStoreError(GraphARCError):
    """A claim store refused an operation or could not be used."""


class ClaimNotFoundError(ClaimStoreError):
    """No claim with the requested id exists in the store."""

    def __init__(self, claim_id: str) -> None:
        super().__init__(
            f"no claim with id {claim_id!r} in this store",
            hint="list stored claims with all(include_superseded=True)",
        )
        self.claim_id = claim_id


class DuplicateClaimError(ClaimStoreError):
    """A claim with this id is already stored; stored claims are never overwritten."""

    def __init__(self, claim_id: str) -> None:
        super().__init__(
            f"a claim with id {claim_id!r} is already stored",
            hint="to correct it, supersede it with a new claim that has a fresh id",
        )
        self.claim_id = claim_id


class ClaimAlreadySupersededError(ClaimStoreError):
    """The claim has already been corrected; only the newest claim of a chain can be."""

    def __init__(self, claim_id: str, superseded_by: str) -> None:
        super().__init__(
            f"claim {claim_id!r} is already superseded by {superseded_by!r}",
            hint="supersede the newest claim of the chain, history(id)[-1]; "
            "new claims are added unsuperseded",
        )
        self.claim_id = claim_id
        self.superseded_by = superseded_by


class InvalidSearchError(GraphARCError, ValueError):
    """A search that cannot be answered as asked, such as one for no results."""


class ClaimStoreClosedError(ClaimStoreError):
    """The store was used after ``close()``."""

    def __init__(self, store: str) -> None:
        super().__init__(f"{store} is closed", hint="open the store again to use it")


def _is_edge_noise(char: str) -> bool:
    """Whether ``char`` is trimmed from the ends of an entity: space, control or punctuation."""
    category = unicodedata.category(char)
    if char.isspace() or category[0] in "CZ":
        return True
    return category[0] == "P" and char not in _NAME_MARKS


_ASCII_EDGE_NOISE = "".join(char for char in map(chr, range(128)) if _is_edge_noise(char))


def _folded_and_trimmed(text: str) -> str:
    """``text`` NFKC-normalised and casefolded, without the edge noise at either end."""
    if text.isascii():  # NFKC leaves ASCII as it is, and casefolding it is lowercasing
        return text.lower().strip(_ASCII_EDGE_NOISE)
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    start, end = 0, len(folded)
    while start < end and _is_edge_noise(folded[start]):
        start += 1
    while end > start and _is_edge_noise(folded[end - 1]):
        end -= 1
    return folded[start:end]


def normalise_entity(text: str) -> str:
    """Return the key under which ``text`` names an entity, so spelling variants meet.

    NFKC-normalises and casefolds (so full-width, ligature and case variants
    agree), trims whitespace, control characters and punctuation at both ends
    (keeping ``#%&*@``, which end real names such as C#), and collapses inner
    whitespace to one space. Letters and marks of every script are kept.
    Raises ``InvalidEntityError`` when nothing is left.
    """
    if not isinstance(text, str):
        raise InvalidEntityError(f"an entity is text, got {type(text).__name__}",
                                 hint="name an entity with a string")
    key = " ".join(_folded_and_trimmed(text).split())
    if not key:
        raise InvalidEntityError(
            f"entity {text!r} normalises to an empty key",
            hint="name an entity with at least one letter, digit or symbol",
        )
    return key


def _require_text(value: str, field: str) -> str:
    """Return ``value`` if it has non-whitespace content a store can keep, else raise naming ``field``."""
    if not value.strip():
        raise ValueError(f"{field} must not be empty or whitespace")
    return _require_encodable(value, field)


def _require_encodable(value: str, field: str) -> str:
    """Return ``value`` if UTF-8 can hold it: a lone surrogate (say, a command-line argument whose
    bytes were not UTF-8) cannot be stored or shown, so it is refused naming ``field``."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"{field} holds {value[exc.start]!r}, which is not text (bytes that were "
                             f"not UTF-8?)") from None
    return value


class _Checked(BaseModel):
    """Validation refuses bad fields with ``InvalidClaimError`` naming each, not pydantic's error.

    The error is not a ``ValueError``, so pydantic lets it through a nested model unchanged.
    """

    @model_validator(mode="wrap")
    @classmethod
    def _refuse_as_grapharc_error(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
                                 for error in exc.errors()[:5])
            raise InvalidClaimError(f"invalid {cls.__name__.lower()}: {problems}") from None


def require_claim(value: object) -> Claim:
    """``value`` if it is a ``Claim`` a store may keep (its text at most ``MAX_CLAIM_BYTES``); every
    store calls it on each claim it is handed to keep, before it writes any."""
    if not isinstance(value, Claim):
        raise InvalidClaimError(f"a claim store keeps Claim objects, got {type(value).__name__}")
    total = len("".join(_text_fields(value).values()).encode("utf-8"))  # one encode, not six
    if total > MAX_CLAIM_BYTES:
        sizes = claim_sizes(value)
        largest = ", ".join(f"{field} {size:,}" for field, size in
                            sorted(sizes.items(), key=lambda item: -item[1])[:3])
        raise ClaimTooLargeError(f"claim {value.id[:40]!r} is {total:,} bytes of text ({largest}); a claim "
                                 f"holds at most {MAX_CLAIM_BYTES:,} bytes")
    return value


def _text_fields(claim: Claim) -> dict[str, str]:
    """Each text field of ``claim`` by name (``run_id``: "" when there is none)."""
    return {"id": claim.id, "subject": claim.subject, "predicate": claim.predicate, "object": claim.object,
            "source": claim.provenance.source, "run_id": claim.provenance.run_id or ""}


def claim_sizes(claim: Claim) -> dict[str, int]:
    """The UTF-8 size of each text field of ``claim``, in bytes."""
    return {field: len(text.encode("utf-8")) for field, text in _text_fields(claim).items()}


def require_claim_id(value: object) -> str:
    """``value`` if it is a claim id (text); a store calls it on ids it is handed."""
    if not isinstance(value, str):
        raise InvalidClaimError(f"a claim id is text, got {type(value).__name__}")
    return value


class Provenance(_Checked):
    """Where a claim came from: its source, when it was observed (UTC), and the producing run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    observed_at: AwareDatetime
    run_id: str | None = None

    @field_validator("source")
    @classmethod
    def _source_not_blank(cls, value: str) -> str:
        return _require_text(value, "provenance.source")

    @field_validator("run_id")
    @classmethod
    def _run_id_not_blank(cls, value: str | None) -> str | None:
        return None if value is None else _require_text(value, "provenance.run_id")

    @field_validator("observed_at")
    @classmethod
    def _observed_at_in_utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)


class Claim(_Checked):
    """One fact (subject, predicate, object) with mandatory provenance.

    ``superseded_by`` is set by a store when a correction replaces the claim;
    it names the replacing claim's id.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=time_ordered_id)
    subject: str
    predicate: str
    object: str
    provenance: Provenance
    superseded_by: str | None = None

    @field_validator("id", "predicate", "object")
    @classmethod
    def _not_blank(cls, value: str, info: ValidationInfo) -> str:
        return _require_text(value, str(info.field_name))

    @field_validator("subject")
    @classmethod
    def _subject_is_an_entity(cls, value: str) -> str:
        normalise_entity(value)
        return _require_encodable(value, "subject")

    @field_validator("superseded_by")
    @classmethod
    def _superseded_by_not_blank(cls, value: str | None) -> str | None:
        return None if value is None else _require_text(value, "superseded_by")

    @property
    def subject_key(self) -> str:
        """The normalised subject, the key ``ClaimStore.about`` matches on."""
        return normalise_entity(self.subject)


class ScoredClaim(NamedTuple):
    """A claim a search found, with its BM25F score (higher is better)."""

    claim: Claim
    score: float


@runtime_checkable
class ClaimStore(Protocol):
    """Durable or in-process storage for claims where corrections supersede, never overwrite.

    Listings are in insertion order. Implementations are safe to share
    between threads. ``grapharc.testing.claim_store_kit`` checks the contract.
    """

    def add(self, claim: Claim) -> Claim:
        """Store a new claim and return it as stored.

        Raises ``DuplicateClaimError`` if its id is taken and
        ``ClaimAlreadySupersededError`` if it arrives with ``superseded_by`` set.
        """
        ...

    def add_many(self, claims: Sequence[Claim]) -> list[Claim]:
        """Store several new claims in one transaction: all of them, or none on any error.

        Raises as ``add`` does, also for an id repeated within ``claims``.
        """
        ...

    def get(self, claim_id: str) -> Claim:
        """Return the claim with this id; raises ``ClaimNotFoundError`` naming the id."""
        ...

    def supersede(self, old_id: str, new_claim: Claim) -> Claim:
        """Atomically store ``new_claim`` as the correction of ``old_id`` and return it.

        The old claim is kept, with ``superseded_by`` naming the new one.
        Raises ``ClaimNotFoundError``, ``ClaimAlreadySupersededError`` (the old
        claim was already corrected) or ``DuplicateClaimError``; on any error
        nothing is written.
        """
        ...

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        """Return the current (not superseded) claims whose normalised subject matches, oldest
        first; only the first ``limit`` of them if given (``retrieve`` needs no more than k)."""
        ...

    def history(self, claim_id: str) -> list[Claim]:
        """Return the whole correction chain ``claim_id`` belongs to, oldest to newest."""
        ...

    def all(self, include_superseded: bool = False) -> list[Claim]:
        """Return every current claim, or every claim ever stored if ``include_superseded``."""
        ...

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        """Return the ``k`` claims that best match ``query`` by BM25F, best first.

        Scores are ``grapharc.memory.bm25f``'s over every stored claim (ties go to
        the older claim), answered from an index the store keeps up to date as
        claims are added, so a query touches the claims that share a term with it
        rather than all of them. Superseded claims are left out unless
        ``include_superseded``. Raises ``InvalidSearchError`` for ``k < 1``.
        """
        ...

    def close(self) -> None:
        """Release resources; idempotent. Later calls raise ``ClaimStoreClosedError``."""
        ...


def check_limit(limit: int | None) -> None:
    """Refuse an ``about`` limit below one, naming it."""
    if limit is not None and limit < 1:
        raise InvalidSearchError(f"about was asked for limit={limit} claims",
                                 hint="ask for at least one claim (limit >= 1), or no limit")


def first_current(found: Iterable[Claim], limit: int | None) -> list[Claim]:
    """The current claims among ``found``, in order, stopping after ``limit`` of them."""
    check_limit(limit)
    return list(islice((claim for claim in found if claim.superseded_by is None), limit))


def check_new_batch(claims: Sequence[Claim]) -> None:
    """Refuse a batch for ``add_many`` in which a claim is marked superseded or an id repeats.

    Shared by the stores so a bad batch is refused alike before any is written (a claim that is not
    one, or too large, too: ``require_claim``); each store then checks the ids against what it
    already holds.
    """
    seen: set[str] = set()
    for claim in map(require_claim, claims):
        if claim.superseded_by is not None:
            raise ClaimAlreadySupersededError(claim.id, claim.superseded_by)
        if claim.id in seen:
            raise DuplicateClaimError(claim.id)
        seen.add(claim.id)


def durable_store_path(scheme: str, distribution: str, location: str, kind: str, *,
                       noun: str, example: str, serves: str = "claims") -> str:
    """The path a durable ``<scheme>:<location>`` store URI for ``serves`` names, or a clear refusal.

    Shared by the durable memory plugins (claims and artifacts) so they refuse a wrong
    kind or an empty location with the same words.
    """
    from grapharc.errors import ConfigurationError

    if kind != serves:
        raise ConfigurationError(
            f"the {scheme}: store scheme of {distribution} serves {serves}, not {kind!r}")
    if not location:
        raise ConfigurationError(f"store URI '{scheme}:' names no {noun}",
                                 hint=f"give a path, for example '{scheme}:{example}'")
    return location
