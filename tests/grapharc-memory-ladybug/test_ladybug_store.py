"""LadybugMemoryStore keeps the ClaimStore contract on a graph, and LadybugDB's lock holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.errors import ConfigurationError
from grapharc.memory.claims import ClaimStoreError
from grapharc.memory.ladybug.store import LadybugLockedError, LadybugMemoryStore, open_claim_store
from grapharc.testing.claim_store_kit import ClaimStoreConformance
from grapharc.testing.claims import make_claim

OPEN_AND_REPORT = """
import json, sys
from grapharc.memory.claims import ClaimStoreError
from grapharc.memory.ladybug.store import LadybugMemoryStore

try:
    store = LadybugMemoryStore(sys.argv[1])
except ClaimStoreError as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
    sys.exit(2)
claims = store.all(include_superseded=True)
print(json.dumps({"claims": [c.model_dump(mode="json") for c in claims]}))
store.close()
"""

READ_ONLY_WITH_THE_ENGINE = """
import sys
import ladybug

connection = ladybug.Connection(ladybug.Database(sys.argv[1], read_only=True))
for _ in sys.stdin:
    rows = connection.execute("MATCH (c:Claim) RETURN c.subject ORDER BY c.seq").get_all()
    print([row[0] for row in rows], flush=True)
"""


IMPORT_WITHOUT_THE_ENGINE = """
import sys
import grapharc.memory.ladybug
import grapharc.memory.ladybug.hooks
import grapharc.memory.ladybug.store
print("ladybug" in sys.modules)
"""


def run_python(script: str, *args: str) -> tuple[int, str]:
    """Run ``script`` in a separate interpreter; return its exit code and stdout."""
    finished = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    assert finished.returncode in (0, 2), finished.stderr
    return finished.returncode, finished.stdout


class TestLadybugMemoryStoreConformance(ClaimStoreConformance):
    """Runs the conformance kit against a LadybugDB file, including close-and-reopen."""

    durable = True

    def make_store(self, tmp_path: Path) -> LadybugMemoryStore:
        return LadybugMemoryStore(tmp_path / "memory.lbug")


def test_a_second_process_cannot_open_a_database_this_process_holds(tmp_path: Path) -> None:
    path = tmp_path / "memory.lbug"
    holder = LadybugMemoryStore(path)
    try:
        holder.add(make_claim("Tokyo"))
        code, out = run_python(OPEN_AND_REPORT, str(path))
        assert code == 2
        report = json.loads(out)
        assert report["error"] == "LadybugLockedError"
        assert f"locked by process {os.getpid()}" in report["message"]
        assert str(path) in report["message"]
    finally:
        holder.close()


def test_a_read_only_reader_neither_waits_for_nor_blocks_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "memory.lbug"
    holder = LadybugMemoryStore(path)
    holder.add(make_claim("Tokyo"))
    reader = subprocess.Popen([sys.executable, "-c", READ_ONLY_WITH_THE_ENGINE, str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reader.stdin is not None and reader.stdout is not None
    try:
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "['Tokyo']"
        holder.add(make_claim("Kyoto"))
        holder.close()
        reopened = LadybugMemoryStore(path)
        reopened.add(make_claim("Osaka"))
        reopened.close()
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "['Tokyo']"
    finally:
        holder.close()
        reader.stdin.close()
        assert reader.wait() == 0


def test_claims_pass_to_the_next_process_once_the_holder_closes(tmp_path: Path) -> None:
    path = tmp_path / "memory.lbug"
    holder = LadybugMemoryStore(path)
    old = holder.add(make_claim("東京", "v1", run_id="run-1"))
    new = holder.supersede(old.id, make_claim("東京", "v2"))
    holder.close()
    code, out = run_python(OPEN_AND_REPORT, str(path))
    assert code == 0
    claims = json.loads(out)["claims"]
    assert [c["id"] for c in claims] == [old.id, new.id]
    assert claims[0]["superseded_by"] == new.id
    assert claims[0]["provenance"]["run_id"] == "run-1"
    assert claims[0]["provenance"]["observed_at"] == "2024-05-01T12:30:15.123456Z"


def test_a_second_open_in_the_same_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.lbug"
    first = LadybugMemoryStore(path)
    try:
        with pytest.raises(LadybugLockedError, match="already open in this process"):
            LadybugMemoryStore(tmp_path / "." / "memory.lbug")
    finally:
        first.close()
    LadybugMemoryStore(path).close()


def test_importing_the_plugin_does_not_load_the_engine() -> None:
    code, out = run_python(IMPORT_WITHOUT_THE_ENGINE)
    assert code == 0
    assert out.strip() == "False"


def test_a_file_that_is_not_ladybug_is_refused_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 200)
    with pytest.raises(ClaimStoreError, match=r"notes\.txt"):
        LadybugMemoryStore(path)
    LadybugMemoryStore(path.with_name("fresh.lbug")).close()


def test_ladybug_uri_opens_the_database_it_names(tmp_path: Path) -> None:
    path = tmp_path / "memory.lbug"
    store = open_claim_store(str(path), "claims")
    store.add(make_claim("Tokyo"))
    store.close()
    assert path.exists()


def test_ladybug_uri_without_a_path_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="names no database"):
        open_claim_store("", "claims")


def test_ladybug_uri_for_another_store_kind_is_refused_naming_the_kind(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="'artifacts'"):
        open_claim_store(str(tmp_path / "memory.lbug"), "artifacts")
