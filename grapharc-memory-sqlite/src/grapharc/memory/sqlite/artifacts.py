"""``SQLiteArtifactStore``: versioned artifacts beside the claims, in the same SQLite file.

Rows (one per version, with provenance and digest) live in the ``artifacts``
table of the claims file; the bytes live in ``<file>.blobs/``, one file per
SHA-256, so identical bytes are stored once. A ``put`` writes its blob to a
temporary file, fsyncs it, renames it to its digest and fsyncs the folder
*before* the row that references it is committed: a crash in between leaves an
unreferenced blob, never a row pointing at nothing. Rows are insert-only
(triggers refuse UPDATE and DELETE), and ``(name, version)`` is unique, so two
processes putting the same name get distinct versions.

``gc`` deletes what such a crash leaves: blobs no row references and half-written
temporary files, once older than a grace period (an hour by default), because a
young blob may belong to a ``put`` whose row is about to be committed. It holds
the write transaction throughout, so no row can start referencing a blob while
it decides, and it moves each blob aside before judging the file it moved: a
writer that just replaced the blob with fresh bytes of the same digest gets them
back under the same name.
"""

from __future__ import annotations

import builtins
import math
import os
import re
import sqlite3
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

from grapharc.memory.artifacts import (
    DEFAULT_GC_GRACE_SECONDS,
    DEFAULT_MEDIA_TYPE,
    Artifact,
    ArtifactNotFoundError,
    ArtifactStoreClosedError,
    ArtifactStoreError,
    Collected,
    InvalidGraceError,
    check_blob,
    new_version,
)
from grapharc.memory.claims import Provenance, durable_store_path
from grapharc.memory.sqlite.database import (
    SQLiteFileStore,
    use_wal,
)

SCHEMA_COMPONENT = "artifacts"
SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE artifacts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        media_type TEXT NOT NULL,
        size INTEGER NOT NULL CHECK (size >= 0),
        sha256 TEXT NOT NULL,
        source TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        run_id TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (name, version)
    )""",
    *(
        f"CREATE TRIGGER artifacts_are_never_{verb}d BEFORE {verb.upper()} ON artifacts "
        f"BEGIN SELECT RAISE(ABORT, 'artifacts are append-only; put a new version'); END"
        for verb in ("update", "delete")
    ),
)

_SELECT = """SELECT id, name, version, media_type, size, sha256, source, observed_at, run_id,
    created_at FROM artifacts"""

_Row = tuple[str, str, int, str, int, str, str, str, str | None, str]

_DIGEST = re.compile(r"[0-9a-f]{64}")
_INCOMING = ".incoming-"  # a blob being written (or left half-written by a crash)
_SET_ASIDE = ".gc-"  # a blob gc moved aside to judge (or left there by a crashed gc)


def _to_artifact(row: _Row) -> Artifact:
    artifact_id, name, version, media_type, size, sha256, source, observed, run_id, created = row
    provenance = Provenance(source=source, observed_at=datetime.fromisoformat(observed),
                            run_id=run_id)
    return Artifact(id=artifact_id, name=name, version=version, media_type=media_type, size=size,
                    sha256=sha256, provenance=provenance,
                    created_at=datetime.fromisoformat(created))


def _fsync_folder(folder: Path) -> None:
    """Make a rename or a new entry in ``folder`` durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class SQLiteArtifactStore(SQLiteFileStore):
    """A durable ``ArtifactStore`` sharing its SQLite file with the claims; processes may share it."""

    noun = "artifact store"
    closed_error = ArtifactStoreClosedError

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.blobs = self.path.with_name(f"{self.path.name}.blobs")
        try:
            if not self.blobs.is_dir():
                self.blobs.mkdir(exist_ok=True)
                _fsync_folder(self.blobs.parent)
            self._connect()
            self._prepare()
        except (OSError, sqlite3.Error) as error:
            self.close()
            raise ArtifactStoreError(
                f"cannot open artifact store {str(self.path)!r}: {error}",
                hint="give the path of a SQLite file (it is created if missing) in an existing, "
                     "writable directory; blobs go in a folder beside it",
            ) from error
        except ArtifactStoreError:
            self.close()
            raise

    def _prepare(self) -> None:
        """Switch the file to WAL and create or check the artifacts schema."""
        use_wal(self._open_connection(), f"artifact store {str(self.path)!r}", ArtifactStoreError)
        with self._transaction() as cursor:
            self._create_or_check(cursor, SCHEMA_COMPONENT, SCHEMA_VERSION, _SCHEMA, ArtifactStoreError)

    def blob_path(self, artifact: Artifact) -> Path:
        """Where the bytes of ``artifact`` are kept: ``<file>.blobs/<sha256>``."""
        return self.blobs / artifact.sha256

    def _write_blob(self, artifact: Artifact, data: bytes) -> None:
        """Durably write ``data`` under its digest: temporary file, fsync, rename, fsync folder."""
        descriptor, temporary = tempfile.mkstemp(dir=self.blobs, prefix=_INCOMING)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.blob_path(artifact))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _fsync_folder(self.blobs)

    def put(self, name: str, data: bytes, provenance: Provenance,
            media_type: str = DEFAULT_MEDIA_TYPE) -> Artifact:
        """Write the blob, then append the row naming it as the next version of ``name``."""
        with self._lock:
            self._open_connection()
            described = new_version(name, data, provenance, media_type, version=1)
            try:
                self._write_blob(described, data)
            except OSError as error:
                raise ArtifactStoreError(
                    f"cannot write the blob of artifact {name!r} to {str(self.blobs)!r}: {error}",
                    hint="free disk space or fix the folder's permissions; nothing was stored",
                ) from error
            with self._transaction() as cursor:
                latest = cursor.execute("SELECT MAX(version) FROM artifacts WHERE name = ?",
                                        (name,)).fetchone()[0]
                artifact = described.model_copy(update={"version": (latest or 0) + 1})
                self._insert(cursor, artifact)
        return artifact

    @staticmethod
    def _insert(cursor: sqlite3.Cursor, artifact: Artifact) -> None:
        provenance = artifact.provenance
        cursor.execute(
            "INSERT INTO artifacts (id, name, version, media_type, size, sha256, source, "
            "observed_at, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (artifact.id, artifact.name, artifact.version, artifact.media_type, artifact.size,
             artifact.sha256, provenance.source, provenance.observed_at.isoformat(),
             provenance.run_id, artifact.created_at.isoformat()))

    def _read(self, sql: str, parameters: tuple[str | int, ...] = ()) -> builtins.list[Artifact]:
        with self._lock:
            rows = self._open_connection().execute(sql, parameters).fetchall()
        return [_to_artifact(row) for row in rows]

    def get(self, name: str, version: int | None = None) -> tuple[Artifact, bytes]:
        """Return a version of ``name`` (the latest by default) and its digest-checked bytes."""
        if version is None:
            found = self._read(f"{_SELECT} WHERE name = ? ORDER BY version DESC LIMIT 1", (name,))
        else:
            found = self._read(f"{_SELECT} WHERE name = ? AND version = ?", (name, version))
        if not found:
            if version is not None and self._read(f"{_SELECT} WHERE name = ? LIMIT 1", (name,)):
                raise ArtifactNotFoundError(name, version)
            raise ArtifactNotFoundError(name)
        artifact = found[0]
        blob = self.blob_path(artifact)
        try:
            data: bytes | None = blob.read_bytes()
        except FileNotFoundError:
            data = None
        except OSError as error:
            raise ArtifactStoreError(
                f"cannot read blob {str(blob)!r} of artifact {name!r}: {error}",
                hint="check that the blobs folder beside the database is readable",
            ) from error
        return artifact, check_blob(artifact, data, str(blob))

    def versions(self, name: str) -> builtins.list[Artifact]:
        """Return every version of ``name``, oldest first."""
        found = self._read(f"{_SELECT} WHERE name = ? ORDER BY version", (name,))
        if not found:
            raise ArtifactNotFoundError(name)
        return found

    def list(self) -> builtins.list[Artifact]:
        """Return the latest version of every name, sorted by name."""
        return self._read(f"{_SELECT} AS a WHERE version = "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                          "(SELECT MAX(version) FROM artifacts WHERE name = a.name) ORDER BY name")

    def gc(self, grace_seconds: float = DEFAULT_GC_GRACE_SECONDS) -> Collected:
        """Delete the blobs no row references, older than ``grace_seconds``; see the module
        docstring. Rows and referenced blobs are never touched."""
        if not isinstance(grace_seconds, int | float) or not math.isfinite(grace_seconds) \
                or grace_seconds < 0:
            raise InvalidGraceError(f"gc grace period {grace_seconds!r} is not a number of seconds",
                                    hint="give 0 or more seconds (default: an hour)")
        cutoff = time.time() - grace_seconds
        removed: builtins.list[str] = []
        freed = young = 0
        with self._lock, self._transaction() as cursor:
            referenced = {row[0] for row in cursor.execute("SELECT DISTINCT sha256 FROM artifacts")}
            for entry in os.scandir(self.blobs):
                if not self._unreferenced(entry, referenced):
                    continue
                try:
                    size = self._collect(Path(entry.path), cutoff)
                except FileNotFoundError:  # a writer renamed its finished temporary file
                    continue
                if size is None:
                    young += 1
                else:
                    removed.append(entry.name)
                    freed += size
            if removed:
                _fsync_folder(self.blobs)
        return Collected(tuple(sorted(removed)), freed, young)

    @staticmethod
    def _unreferenced(entry: os.DirEntry[str], referenced: set[str]) -> bool:
        """Whether ``entry`` is a blob no row names, or a temporary file a writer or gc left."""
        if not entry.is_file(follow_symlinks=False):
            return False
        if entry.name.startswith((_INCOMING, _SET_ASIDE)):
            return True
        return _DIGEST.fullmatch(entry.name) is not None and entry.name not in referenced

    @staticmethod
    def _collect(blob: Path, cutoff: float) -> int | None:
        """Delete ``blob`` if it was last written before ``cutoff``: the bytes freed, or None if
        it was kept as young."""
        found = blob.stat()
        if found.st_mtime > cutoff:
            return None
        if blob.name.startswith((_INCOMING, _SET_ASIDE)):
            blob.unlink()
            return found.st_size
        aside = blob.with_name(f"{_SET_ASIDE}{uuid.uuid4().hex}")
        os.rename(blob, aside)
        moved = aside.stat()
        if moved.st_mtime > cutoff:  # a writer replaced it just now: the same bytes go back
            os.replace(aside, blob)
            return None
        aside.unlink()
        return moved.st_size


def open_artifact_store(location: str, kind: str) -> SQLiteArtifactStore:
    """Open the artifact store for the URI ``sqlite:<location>``, the claims file's path."""
    path = durable_store_path("sqlite", "grapharc-memory-sqlite", location, kind,
                              noun="file", example="memory.db", serves="artifacts")
    return SQLiteArtifactStore(path)
