"""SQLiteArtifactStore keeps the ArtifactStore contract in the claims file, across processes and crashes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.artifacts import (
    Artifact,
    ArtifactCorruptedError,
    ArtifactStore,
    ArtifactStoreError,
    Collected,
    InvalidGraceError,
)
from grapharc.memory.sqlite.artifacts import SCHEMA_VERSION as ARTIFACTS_SCHEMA
from grapharc.memory.sqlite.artifacts import SQLiteArtifactStore
from grapharc.memory.sqlite.store import SCHEMA_VERSION as CLAIMS_SCHEMA
from grapharc.memory.sqlite.store import SQLiteMemoryStore
from grapharc.stores import open_store
from grapharc.testing.artifact_store_kit import PROVENANCE, ArtifactStoreConformance
from grapharc.testing.claims import make_claim

# Puts two versions, then a third whose process SIGKILLs itself at the point argv[2]
# names: just before its blob is written, just after, or as its row is inserted.
KILLED_DURING_A_PUT = """
import os, signal, sys
from grapharc.memory.sqlite.artifacts import SCHEMA_VERSION as ARTIFACTS_SCHEMA
from grapharc.memory.sqlite.artifacts import SQLiteArtifactStore
from grapharc.testing.artifact_store_kit import PROVENANCE

def die():
    os.kill(os.getpid(), signal.SIGKILL)

store = SQLiteArtifactStore(sys.argv[1])
store.put("report.md", b"version one", PROVENANCE)
store.put("report.md", b"version two", PROVENANCE)
write_blob = store._write_blob
if sys.argv[2] == "before-blob":
    store._write_blob = lambda *args: (die(), write_blob(*args))
elif sys.argv[2] == "after-blob":
    store._write_blob = lambda *args: (write_blob(*args), die())
else:
    store._connection.set_trace_callback(
        lambda statement: statement.startswith("INSERT INTO artifacts") and die())
store.put("report.md", b"version three, never recorded", PROVENANCE)
"""

WRITER = """
import json, sys
from grapharc.memory.sqlite.artifacts import SCHEMA_VERSION as ARTIFACTS_SCHEMA
from grapharc.memory.sqlite.artifacts import SQLiteArtifactStore
from grapharc.testing.artifact_store_kit import PROVENANCE

store = SQLiteArtifactStore(sys.argv[1])
written = [store.put("log.txt", f"writer {sys.argv[2]} line {i}".encode(), PROVENANCE).version
           for i in range(20)]
store.close()
print(json.dumps(written))
"""


class TestSQLiteArtifactStoreConformance(ArtifactStoreConformance):
    """Runs the conformance kit against a SQLite file, including close-and-reopen."""

    durable = True

    def make_store(self, tmp_path: Path) -> SQLiteArtifactStore:
        return SQLiteArtifactStore(tmp_path / "memory.db")

    def damage_blob(self, store: ArtifactStore, artifact: Artifact) -> None:
        assert isinstance(store, SQLiteArtifactStore)
        store.blob_path(artifact).write_bytes(b"bit rot")


@pytest.fixture
def store(tmp_path: Path):
    opened = SQLiteArtifactStore(tmp_path / "memory.db")
    yield opened
    opened.close()


@pytest.mark.parametrize("moment", ["before-blob", "after-blob", "at-row-insert"])
def test_a_process_killed_inside_a_put_never_leaves_a_row_without_its_blob(
    tmp_path: Path, moment: str
) -> None:
    path = tmp_path / "memory.db"
    killed = subprocess.run([sys.executable, "-c", KILLED_DURING_A_PUT, str(path), moment],
                            capture_output=True, text=True, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    store = SQLiteArtifactStore(path)
    try:
        assert [a.version for a in store.versions("report.md")] == [1, 2]
        for artifact in store.list() + store.versions("report.md"):
            assert store.get(artifact.name, artifact.version)[0] == artifact
        assert store.get("report.md")[1] == b"version two"
        referenced = {a.sha256 for a in store.versions("report.md")}
        on_disk = {blob.name for blob in store.blobs.iterdir() if not blob.name.startswith(".")}
        garbage = on_disk - referenced
        assert len(garbage) == (0 if moment == "before-blob" else 1)
        assert store.put("report.md", b"after the crash", PROVENANCE).version == 3
    finally:
        store.close()


def test_a_missing_blob_is_reported_as_corruption_naming_its_path(
    store: SQLiteArtifactStore,
) -> None:
    artifact = store.put("report.md", b"words", PROVENANCE)
    store.blob_path(artifact).unlink()
    with pytest.raises(ArtifactCorruptedError, match="is missing") as corrupt:
        store.get("report.md")
    assert str(store.blob_path(artifact)) in str(corrupt.value)


def test_an_unreadable_blob_is_one_clear_error_naming_it(store: SQLiteArtifactStore) -> None:
    artifact = store.put("report.md", b"words", PROVENANCE)
    store.blob_path(artifact).unlink()
    store.blob_path(artifact).mkdir()
    with pytest.raises(ArtifactStoreError, match="cannot read blob") as refused:
        store.get("report.md")
    assert artifact.sha256 in str(refused.value) and refused.value.hint


def test_a_blob_that_cannot_be_written_stores_nothing_and_says_why(
    store: SQLiteArtifactStore,
) -> None:
    store.blobs.rmdir()
    store.blobs.write_text("a file where the blobs folder should be")
    with pytest.raises(ArtifactStoreError, match=r"cannot write the blob of artifact 'report\.md'"):
        store.put("report.md", b"words", PROVENANCE)
    assert store.list() == []


def test_identical_bytes_share_one_blob_named_by_their_digest(store: SQLiteArtifactStore) -> None:
    first = store.put("a.txt", b"same bytes", PROVENANCE)
    store.put("b.txt", b"same bytes", PROVENANCE)
    assert [blob.name for blob in store.blobs.iterdir()] == [first.sha256]


def test_artifacts_share_the_claims_file_without_disturbing_the_claims(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    claims = SQLiteMemoryStore(path)
    artifacts = SQLiteArtifactStore(path)
    try:
        claim = claims.add(make_claim("Tokyo", "14 million"))
        artifact = artifacts.put("census.csv", b"city,people\nTokyo,14000000\n", PROVENANCE,
                                 media_type="text/csv")
        assert claims.all() == [claim]
        assert artifacts.list() == [artifact]
    finally:
        claims.close()
        artifacts.close()
    raw = sqlite3.connect(path)
    try:
        assert sorted(raw.execute("SELECT component, version FROM schema_versions")) == [
            ("artifacts", ARTIFACTS_SCHEMA), ("claims", CLAIMS_SCHEMA)]
    finally:
        raw.close()


def test_two_processes_putting_one_name_get_every_version_once(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    SQLiteArtifactStore(path).close()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, path, str(n)],
                                stdout=subprocess.PIPE, text=True) for n in (1, 2)]
    written = [json.loads(writer.communicate()[0]) for writer in writers]
    assert all(writer.returncode == 0 for writer in writers)
    assert sorted(written[0] + written[1]) == list(range(1, 41))
    store = SQLiteArtifactStore(path)
    try:
        contents = {store.get("log.txt", v)[1] for v in range(1, 41)}
        assert contents == {f"writer {n} line {i}".encode() for n in (1, 2) for i in range(20)}
    finally:
        store.close()


@pytest.mark.parametrize("statement", ["UPDATE artifacts SET size = 0", "DELETE FROM artifacts"])
def test_rows_cannot_be_rewritten_or_deleted_even_by_raw_sql(
    store: SQLiteArtifactStore, statement: str
) -> None:
    store.put("report.md", b"words", PROVENANCE)
    raw = sqlite3.connect(store.path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute(statement)
    finally:
        raw.close()


def test_sqlite_uri_opens_the_artifact_store_of_that_file(tmp_path: Path) -> None:
    store = open_store(f"sqlite:{tmp_path / 'memory.db'}", kind="artifacts")
    try:
        assert isinstance(store, SQLiteArtifactStore)
        assert store.path == tmp_path / "memory.db"
    finally:
        store.close()
    with pytest.raises(ConfigurationError, match="names no file"):
        open_store("sqlite:", kind="artifacts")


def test_a_file_with_a_newer_artifacts_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    SQLiteArtifactStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE schema_versions SET version = 2 WHERE component = 'artifacts'")
    raw.commit()
    raw.close()
    with pytest.raises(ArtifactStoreError, match="artifacts schema version 2") as refused:
        SQLiteArtifactStore(path)
    assert refused.value.hint


def test_an_unusable_location_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(ArtifactStoreError, match="cannot open artifact store") as refused:
        SQLiteArtifactStore(tmp_path / "a-file" / "memory.db")
    assert "a-file" in str(refused.value) and refused.value.hint


ORPHAN = b"version three, never recorded"
TWO_HOURS = 2 * 3600


def crash_between_blob_and_row(path: Path, moment: str = "after-blob") -> None:
    """Two versions of report.md, then a third whose process is SIGKILLed after its blob."""
    killed = subprocess.run([sys.executable, "-c", KILLED_DURING_A_PUT, str(path), moment],
                            capture_output=True, text=True, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def age(folder: Path, seconds: float) -> None:
    """Make every file in ``folder`` look last written ``seconds`` ago."""
    for blob in folder.iterdir():
        stat = blob.stat()
        os.utime(blob, (stat.st_atime - seconds, stat.st_mtime - seconds))


@pytest.mark.parametrize("moment", ["after-blob", "as-row"])
def test_gc_deletes_the_blob_a_crash_orphaned_once_it_is_old_and_nothing_referenced(
    tmp_path: Path, moment: str
) -> None:
    path = tmp_path / "memory.db"
    crash_between_blob_and_row(path, moment)
    store = SQLiteArtifactStore(path)
    try:
        (store.blobs / ".incoming-half-written").write_bytes(b"half a blob")
        assert store.gc() == Collected(removed=(), freed_bytes=0, kept_young=2)  # too young
        age(store.blobs, TWO_HOURS)
        collected = store.gc()
        assert collected.removed == tuple(sorted([".incoming-half-written",
                                                  store.put("x", ORPHAN, PROVENANCE).sha256]))
        assert collected.freed_bytes == len(ORPHAN) + len(b"half a blob")
        assert store.get("x")[1] == ORPHAN  # the blob a new put wrote afresh was kept
        referenced = {a.sha256 for a in store.versions("report.md") + store.versions("x")}
        assert {blob.name for blob in store.blobs.iterdir()} == referenced
        assert [store.get("report.md", v)[1] for v in (1, 2)] == [b"version one", b"version two"]
        assert store.gc() == Collected(removed=(), freed_bytes=0, kept_young=0)
    finally:
        store.close()


def test_gc_with_no_grace_still_keeps_every_referenced_blob(store: SQLiteArtifactStore) -> None:
    kept = store.put("report.md", b"words", PROVENANCE)
    age(store.blobs, TWO_HOURS)
    assert store.gc(0) == Collected(removed=(), freed_bytes=0, kept_young=0)
    assert store.get("report.md") == (kept, b"words")


@pytest.mark.parametrize("grace", [-1, float("nan"), "soon"])
def test_gc_refuses_a_grace_period_that_is_not_seconds(store: SQLiteArtifactStore, grace) -> None:
    with pytest.raises(InvalidGraceError, match="grace period"):
        store.gc(grace)


def test_memory_gc_on_the_command_line_reports_what_it_deleted(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    crash_between_blob_and_row(path)
    blobs = tmp_path / "memory.db.blobs"
    age(blobs, TWO_HOURS)

    def gc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "grapharc.cli", "memory", "gc", *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)

    young = gc("--memory", str(path), "--grace", "1e9", "--json")
    assert young.returncode == 0, young.stderr
    assert json.loads(young.stdout) == {"ok": True, "memory": f"sqlite:{path}", "removed": [],
                                        "freed_bytes": 0, "kept_young": 1}
    done = gc("--memory", f"sqlite:{path}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"removed 1 unreferenced blob(s), {len(ORPHAN)} bytes; "
                           "kept 0 younger than the grace period\n")
    assert len(list(blobs.iterdir())) == 2
    refused = gc("--memory", "memory:", "--json")
    assert refused.returncode == 2 and json.loads(refused.stdout)["ok"] is False
