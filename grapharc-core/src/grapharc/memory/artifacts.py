"""Artifacts: named, versioned blobs with provenance, the ``ArtifactStore`` contract and its errors.

An artifact is a file a run produced (a report, a patch, a dataset) kept under a
name. Every ``put`` appends a new version and nothing is ever overwritten, so a
later run can always read exactly the bytes an earlier one saw. Each version
records the SHA-256 of its bytes, and a store checks it on every read, so a
damaged blob is reported instead of handed back.
"""

from __future__ import annotations

import builtins
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from grapharc.errors import GraphARCError
from grapharc.memory.claims import Provenance
from grapharc.memory.ids import time_ordered_id

DEFAULT_MEDIA_TYPE = "application/octet-stream"

_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*(;.*)?")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ArtifactStoreError(GraphARCError):
    """An artifact store refused an operation or could not be used."""


class InvalidArtifactError(ArtifactStoreError, ValueError):
    """A ``put`` whose name, bytes, media type or provenance cannot make an artifact."""


class ArtifactNotFoundError(ArtifactStoreError):
    """No artifact with the requested name, or no such version of it."""

    def __init__(self, name: str, version: int | None = None) -> None:
        what = f"artifact {name!r}" if version is None else f"version {version} of artifact {name!r}"
        super().__init__(
            f"no {what} in this store",
            hint="list stored artifacts with list(), and a name's versions with versions(name)",
        )
        self.name = name
        self.version = version


class ArtifactCorruptedError(ArtifactStoreError):
    """A stored blob is missing or its bytes no longer match the digest recorded for it."""

    def __init__(self, artifact: Artifact, blob: str, problem: str) -> None:
        super().__init__(
            f"version {artifact.version} of artifact {artifact.name!r} is corrupt: "
            f"blob {blob} {problem}",
            hint="restore the blob from a backup; the store never rewrites a stored version",
        )
        self.artifact = artifact
        self.blob = blob


class ArtifactStoreClosedError(ArtifactStoreError):
    """The store was used after ``close()``."""

    def __init__(self, store: str) -> None:
        super().__init__(f"{store} is closed", hint="open the store again to use it")


class Artifact(BaseModel):
    """One stored version of a named blob: what it is, how big, its digest and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=time_ordered_id)
    name: str
    version: int = Field(ge=1)
    media_type: str = DEFAULT_MEDIA_TYPE
    size: int = Field(ge=0)
    sha256: str
    provenance: Provenance
    created_at: AwareDatetime

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("artifact name must not be empty or whitespace")
        return value

    @field_validator("media_type")
    @classmethod
    def _media_type_is_type_slash_subtype(cls, value: str) -> str:
        if not _MEDIA_TYPE.fullmatch(value):
            raise ValueError(f"media type {value!r} is not of the form type/subtype")
        return value

    @field_validator("sha256")
    @classmethod
    def _sha256_is_hex(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("sha256 must be 64 lowercase hexadecimal digits")
        return value

    @field_validator("created_at")
    @classmethod
    def _created_at_in_utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)


def digest(data: bytes) -> str:
    """The SHA-256 of ``data`` as lowercase hex, the address of a blob."""
    return hashlib.sha256(data).hexdigest()


def new_version(name: str, data: bytes, provenance: Provenance | None, media_type: str,
                version: int) -> Artifact:
    """Describe ``data`` as ``version`` of ``name``, or refuse naming the artifact.

    Every store calls this before writing anything, so a refused ``put`` stores nothing.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidArtifactError(f"artifact name {name!r} is empty",
                                   hint="name an artifact with visible text, e.g. 'report.md'")
    if not isinstance(provenance, Provenance):
        raise InvalidArtifactError(
            f"artifact {name!r} has no provenance",
            hint="pass provenance=Provenance(source=..., observed_at=...) saying where it came from")
    if not isinstance(data, bytes):
        raise InvalidArtifactError(f"artifact {name!r} must be bytes, not {type(data).__name__}",
                                   hint="encode text first, e.g. text.encode('utf-8')")
    if not isinstance(media_type, str) or not _MEDIA_TYPE.fullmatch(media_type):
        raise InvalidArtifactError(f"artifact {name!r} has media type {media_type!r}",
                                   hint=f"give type/subtype, e.g. 'text/markdown' or "
                                        f"{DEFAULT_MEDIA_TYPE!r}")
    return Artifact(name=name, version=version, media_type=media_type, size=len(data),
                    sha256=digest(data), provenance=provenance, created_at=datetime.now(UTC))


def check_blob(artifact: Artifact, data: bytes | None, blob: str) -> bytes:
    """Return ``data`` if it is the blob ``artifact`` recorded, else raise ``ArtifactCorruptedError``."""
    if data is None:
        raise ArtifactCorruptedError(artifact, blob, "is missing")
    if len(data) != artifact.size or digest(data) != artifact.sha256:
        raise ArtifactCorruptedError(
            artifact, blob, f"holds {len(data)} bytes that do not match sha256 {artifact.sha256}")
    return data


@runtime_checkable
class ArtifactStore(Protocol):
    """Storage for named, versioned blobs where every ``put`` appends and nothing is overwritten.

    Implementations are safe to share between threads.
    ``grapharc.testing.artifact_store_kit`` checks the contract.
    """

    def put(self, name: str, data: bytes, provenance: Provenance,
            media_type: str = DEFAULT_MEDIA_TYPE) -> Artifact:
        """Store ``data`` as the next version of ``name`` (1 for a new name) and return it.

        Raises ``InvalidArtifactError`` naming the artifact (no provenance, a blank name,
        data that is not bytes, a malformed media type); then nothing is stored.
        """
        ...

    def get(self, name: str, version: int | None = None) -> tuple[Artifact, bytes]:
        """Return a version of ``name`` (the latest by default) and its bytes, digest-checked.

        Raises ``ArtifactNotFoundError`` naming the name (and version), and
        ``ArtifactCorruptedError`` naming the blob if its bytes are missing or changed.
        """
        ...

    def versions(self, name: str) -> builtins.list[Artifact]:
        """Return every version of ``name``, oldest first; ``ArtifactNotFoundError`` if none."""
        ...

    def list(self) -> builtins.list[Artifact]:
        """Return the latest version of every stored name, sorted by name."""
        ...

    def close(self) -> None:
        """Release resources; idempotent. Later calls raise ``ArtifactStoreClosedError``."""
        ...


class InvalidGraceError(ArtifactStoreError, ValueError):
    """A garbage-collection grace period that is negative or not a number."""


DEFAULT_GC_GRACE_SECONDS = 3600.0
"""How old an unreferenced blob must be before ``gc`` deletes it: a writer puts its blob
before its row, so a young blob may be one whose row is about to be committed."""


@dataclass(frozen=True)
class Collected:
    """What one ``gc`` pass did: the unreferenced blobs it deleted (digests, or the names of
    half-written temporary files), the bytes that freed, and how many it kept as too young."""

    removed: tuple[str, ...]
    freed_bytes: int
    kept_young: int


@runtime_checkable
class CollectsGarbage(Protocol):
    """An artifact store whose blobs live apart from its rows, so a crash can orphan one."""

    def gc(self, grace_seconds: float = DEFAULT_GC_GRACE_SECONDS) -> Collected:
        """Delete the blobs no row references that are older than ``grace_seconds``."""
        ...
