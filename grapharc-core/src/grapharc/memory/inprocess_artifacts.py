"""The in-process artifact store: versions and their bytes in dicts for the life of the process.

Like ``InMemoryClaimStore`` it writes nothing to disk; the durable store is
``SQLiteArtifactStore`` in grapharc-memory-sqlite. Blobs are kept by digest, so
storing the same bytes twice keeps them once.
"""

from __future__ import annotations

import builtins
import threading

from grapharc.memory.artifacts import (
    DEFAULT_MEDIA_TYPE,
    Artifact,
    ArtifactNotFoundError,
    ArtifactStoreClosedError,
    check_blob,
    new_version,
)
from grapharc.memory.claims import Provenance


class InMemoryArtifactStore:
    """A thread-safe ``ArtifactStore`` that keeps every version in memory."""

    def __init__(self) -> None:
        self._versions: dict[str, builtins.list[Artifact]] = {}
        self._blobs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise ArtifactStoreClosedError("the in-process artifact store")

    def _require(self, name: str) -> builtins.list[Artifact]:
        found = self._versions.get(name)
        if not found:
            raise ArtifactNotFoundError(name)
        return found

    def put(self, name: str, data: bytes, provenance: Provenance,
            media_type: str = DEFAULT_MEDIA_TYPE) -> Artifact:
        """Append ``data`` as the next version of ``name``; see ``ArtifactStore.put``."""
        with self._lock:
            self._check_open()
            existing = self._versions.get(name, [])
            artifact = new_version(name, data, provenance, media_type, len(existing) + 1)
            self._blobs.setdefault(artifact.sha256, data)
            self._versions[name] = [*existing, artifact]
            return artifact

    def get(self, name: str, version: int | None = None) -> tuple[Artifact, bytes]:
        """Return a version of ``name`` and its checked bytes; see ``ArtifactStore.get``."""
        with self._lock:
            self._check_open()
            found = self._require(name)
            if version is None:
                artifact = found[-1]
            elif 1 <= version <= len(found):
                artifact = found[version - 1]
            else:
                raise ArtifactNotFoundError(name, version)
            blob = self._blobs.get(artifact.sha256)
        return artifact, check_blob(artifact, blob, artifact.sha256)

    def versions(self, name: str) -> builtins.list[Artifact]:
        """Return every version of ``name``, oldest first."""
        with self._lock:
            self._check_open()
            return builtins.list(self._require(name))

    def list(self) -> builtins.list[Artifact]:
        """Return the latest version of every name, sorted by name."""
        with self._lock:
            self._check_open()
            return [self._versions[name][-1] for name in sorted(self._versions)]

    def close(self) -> None:
        """Mark the store closed; the artifacts are dropped with it."""
        with self._lock:
            self._closed = True
            self._versions.clear()
            self._blobs.clear()
