"""``grapharc memory add | search | history | contradictions``: a claim store looked into from the shell.

Each command opens its store from the SQLite (or LadybugDB) file and closes it, so a claim one adds
is read back by another from the file alone. Every command runs as a process of its own at least
once (``grapharc_process``): a claim added by one process is found by another, a history and a
contradictions check are read by processes, a store another process holds is refused. The other
tests call the same entry point in this process (``grapharc``), an exit status and two captured
streams as a process has, for a small part of a process's start.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from grapharc.cli.main import run

STORE = "sqlite:memory.db"

Result = subprocess.CompletedProcess[str]


def settings_removed() -> dict[str, str]:
    """This environment without GRAPHARC_* settings (GRAPHARC_DEBUG kept), as a user's shell has."""
    return {name: value for name, value in os.environ.items()
            if not name.startswith("GRAPHARC_") or name == "GRAPHARC_DEBUG"}


def grapharc_process(cwd: Path, *args: str) -> Result:
    """``grapharc ARGS`` run as a process of its own in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=settings_removed(), timeout=120)


def grapharc(cwd: Path, *args: str) -> Result:
    """``grapharc ARGS`` run in this process by the command's entry point, in ``cwd`` with the
    environment a process gets: its exit status and its output as a process's."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        for name in set(os.environ) - set(settings_removed()):
            patch.delenv(name)
        with redirect_stdout(out), redirect_stderr(err):
            code = run(list(args))
    return subprocess.CompletedProcess(["grapharc", *args], code, out.getvalue(), err.getvalue())


def document(result: Result) -> dict:
    """The one JSON document a --json command printed (json.loads refuses anything more)."""
    return json.loads(result.stdout)


def add(cwd: Path, subject: str, predicate: str, object_: str, *extra: str,
        store: str = STORE, via: Callable[..., Result] = grapharc) -> str:
    result = via(cwd, "memory", "add", subject, predicate, object_, "--source", "letters.txt",
                 "--memory", store, *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_claims_added_by_one_process_are_ranked_by_a_search_in_another(tmp_path):
    ada = add(tmp_path, "Ada Lovelace", "worked with", "Charles Babbage", via=grapharc_process)
    engine = add(tmp_path, "Charles Babbage", "designed", "the Analytical Engine", via=grapharc_process)
    add(tmp_path, "Tokyo", "population", "14 million", via=grapharc_process)

    found = grapharc_process(tmp_path, "memory", "search", "Ada Lovelace", "--memory", STORE, "--json")
    assert found.returncode == 0, found.stderr
    hits = document(found)["hits"]
    assert [hit["claim"]["id"] for hit in hits] == [ada, engine]  # the second by one entity hop
    assert hits[0]["score"] == 1.0 and hits[0]["channels"] == ["bm25f"]
    assert hits[1]["channels"] == ["graph"] and hits[1]["via"] == ada and hits[1]["score"] == 0.5
    assert hits[0]["claim"]["provenance"]["source"] == "letters.txt"

    no_hops = grapharc_process(tmp_path, "memory", "search", "Ada Lovelace", "--hops", "0", "--memory", STORE)
    lines = no_hops.stdout.splitlines()
    assert no_hops.returncode == 0 and len(lines) == 1
    assert lines[0].startswith("1.000  " + ada) and "source: letters.txt" in lines[0]


def test_a_search_that_matches_nothing_exits_1_with_an_empty_list(tmp_path):
    add(tmp_path, "Tokyo", "population", "14 million")
    human = grapharc(tmp_path, "memory", "search", "zebra", "--memory", STORE)
    assert human.returncode == 1 and human.stdout == "" and "no claim matches 'zebra'" in human.stderr
    as_json = grapharc(tmp_path, "memory", "search", "zebra", "--memory", STORE, "--json")
    assert as_json.returncode == 1 and document(as_json) == {"ok": False, "query": "zebra", "hits": []}


def test_a_correction_is_a_chain_in_history_and_searches_skip_the_old_claim_unless_asked(tmp_path):
    old = add(tmp_path, "Tokyo", "population", "14 million")
    new = add(tmp_path, "Tokyo", "population", "13.9 million", "--supersedes", old)

    history = grapharc_process(tmp_path, "memory", "history", new, "--memory", STORE, "--json")
    chain = document(history)["chain"]
    assert [claim["id"] for claim in chain] == [old, new]
    assert chain[0]["superseded_by"] == new and chain[1]["superseded_by"] is None
    human = grapharc(tmp_path, "memory", "history", old, "--memory", STORE).stdout.splitlines()
    assert human[0].startswith(old) and f"superseded by {new}" in human[0] and human[1].startswith(new)

    current = document(grapharc(tmp_path, "memory", "search", "Tokyo", "--memory", STORE, "--json"))
    assert [hit["claim"]["id"] for hit in current["hits"]] == [new]
    every = document(grapharc(tmp_path, "memory", "search", "Tokyo", "--include-superseded",
                              "--memory", STORE, "--json"))
    assert {hit["claim"]["id"] for hit in every["hits"]} == {old, new}

    again = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "13 million", "--source", "x",
                     "--supersedes", old, "--memory", STORE)
    assert again.returncode == 2 and f"already superseded by '{new}'" in again.stderr
    assert "hint: supersede the current claim of the chain" in again.stderr


def test_add_reports_the_contradiction_it_creates_and_resolves_nothing(tmp_path):
    first = add(tmp_path, "Tokyo", "population", "14 million")
    added = grapharc(tmp_path, "memory", "add", "tokyo", "Population", "13 million",
                     "--source", "census.csv", "--memory", STORE, "--json")
    assert added.returncode == 0
    report = document(added)
    assert [claim["id"] for claim in report["contradicts"]] == [first]
    second = report["claim"]["id"]

    human = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "12 million",
                     "--source", "old atlas", "--memory", STORE)
    assert human.returncode == 0 and len(human.stdout.split()) == 1  # stdout is the id alone
    assert human.stderr.count("warning: contradicts") == 2 and first in human.stderr

    listed = grapharc_process(tmp_path, "memory", "contradictions", "TOKYO", "--memory", STORE, "--json")
    assert listed.returncode == 1
    pairs = document(listed)["pairs"]
    assert len(pairs) == 3 and (pairs[0]["older"]["id"], pairs[0]["newer"]["id"]) == (first, second)
    assert all(pair[side]["superseded_by"] is None for pair in pairs for side in ("older", "newer"))


def test_a_consistent_store_passes_the_contradictions_check(tmp_path):
    add(tmp_path, "Tokyo", "population", "14 million")
    add(tmp_path, "Kyoto", "population", "1.5 million")
    checked = grapharc(tmp_path, "memory", "contradictions", "--memory", STORE)
    assert checked.returncode == 0 and checked.stdout == "no contradictions among 2 current claim(s)\n"
    as_json = document(grapharc(tmp_path, "memory", "contradictions", "--memory", STORE, "--json"))
    assert as_json == {"ok": True, "subject": None, "checked": 2, "pairs": []}


def test_a_claim_without_provenance_is_refused_and_nothing_is_written(tmp_path):
    missing = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "14 million", "--memory", STORE)
    assert missing.returncode == 2 and "Missing option '--source'" in missing.stderr
    blank = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "14 million", "--source", " ",
                     "--memory", STORE, "--json")
    assert blank.returncode == 2
    assert document(blank)["error"]["code"] == "InvalidClaimError"
    assert "provenance.source must not be empty" in document(blank)["error"]["message"]
    assert not (tmp_path / "memory.db").exists()


def test_memory_uri_serves_add_only(tmp_path):
    added = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "14 million", "--source", "x",
                     "--memory", "memory:", "--json")
    assert added.returncode == 0 and document(added)["in_process"] is True
    read = grapharc(tmp_path, "memory", "search", "Tokyo", "--memory", "memory:")
    assert read.returncode == 2 and "in-process store that starts empty" in read.stderr


def test_an_unknown_claim_id_is_one_error_line(tmp_path):
    add(tmp_path, "Tokyo", "population", "14 million")
    result = grapharc(tmp_path, "memory", "history", "no-such-id", "--memory", STORE)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: no claim with id 'no-such-id' in this store",
        "hint: find claim ids with: grapharc memory search WORDS --include-superseded"]
    unknown = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "13 million", "--source", "x",
                       "--supersedes", "no-such-id", "--memory", STORE, "--json")
    assert unknown.returncode == 2 and document(unknown)["error"]["code"] == "ClaimNotFoundError"


@pytest.mark.parametrize("store", ["sqlite:fresh.db", "fresh.db"])
def test_a_correction_against_a_store_that_does_not_exist_is_refused_and_creates_none(tmp_path, store):
    result = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "13 million", "--source", "x",
                      "--supersedes", "c-1", "--memory", store, "--json")
    assert result.returncode == 2 and document(result)["error"]["code"] == "ClaimStoreMissingError"
    assert list(tmp_path.iterdir()) == []  # the refused correction left no new store behind


@pytest.mark.parametrize(("uri", "says"), [
    ("sqlite:missing.db", "missing.db' (from 'sqlite:"),
    ("sqlite:folder", "unable to open database file"),
    ("sqlite:noise.bin", "file is not a database"),
    ("ladybug:noise.bin", "not a valid Lbug database file"),
    ("nosuch:memory.db", "unknown store scheme 'nosuch'"),
    ("memory.db", "memory.db' (from 'sqlite:"),  # a bare path is the local default, sqlite:
    ("sqlite:", "names no file"),
])
def test_a_store_that_cannot_be_read_is_one_error_line_and_is_left_as_it_was(tmp_path, uri, says):
    (tmp_path / "folder").mkdir()
    noise = bytes(range(256)) * 64
    (tmp_path / "noise.bin").write_bytes(noise)
    result = grapharc(tmp_path, "memory", "search", "Tokyo", "--memory", uri)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and says in lines[0]
    assert lines[1].startswith("hint: ")
    as_json = grapharc(tmp_path, "memory", "contradictions", "--memory", uri, "--json")
    assert as_json.returncode == 2 and says in document(as_json)["error"]["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "noise.bin"]
    assert (tmp_path / "noise.bin").read_bytes() == noise


def test_a_ladybug_database_another_process_holds_is_refused_in_one_line(tmp_path):
    from grapharc.memory.ladybug.store import LadybugMemoryStore

    add(tmp_path, "Tokyo", "population", "14 million", store="ladybug:memory.lbug")
    holder = LadybugMemoryStore(tmp_path / "memory.lbug")
    try:
        result = grapharc_process(tmp_path, "memory", "search", "Tokyo", "--memory",
                                  "ladybug:memory.lbug", "--json")
        assert result.returncode == 2
        assert document(result)["error"]["code"] == "LadybugLockedError"
    finally:
        holder.close()
    freed = grapharc(tmp_path, "memory", "search", "Tokyo", "--memory", "ladybug:memory.lbug")
    assert freed.returncode == 0 and "Tokyo | population | 14 million" in freed.stdout


def test_claim_text_cannot_move_the_terminal_cursor(tmp_path):
    add(tmp_path, "Tokyo", "population", "14 million\x1b[2J\rfake")
    shown = grapharc(tmp_path, "memory", "search", "Tokyo", "--memory", STORE).stdout
    assert "\x1b" not in shown and "\r" not in shown and "14 million\\x1b[2J\\rfake" in shown


def test_without_a_store_named_the_commands_say_how_to_name_one(tmp_path):
    result = grapharc(tmp_path, "memory", "search", "Tokyo")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: no claim store given: these commands read and write a store you name, and none "
        "is configured",
        'hint: pass --memory URI (for example --memory sqlite:memory.db), set GRAPHARC_MEMORY, '
        'or put memory = "sqlite:memory.db" in grapharc.toml']
    as_json = grapharc(tmp_path, "memory", "add", "Tokyo", "population", "14 million", "--source", "x",
                       "--json")
    assert as_json.returncode == 2 and document(as_json)["error"]["code"] == "NoClaimStoreError"
    assert list(tmp_path.iterdir()) == []


def test_the_memory_setting_names_the_store_and_a_bare_path_is_a_sqlite_file(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "notes").mkdir(parents=True)
    elsewhere.mkdir()
    config = project / "grapharc.toml"
    config.write_text('[grapharc]\nmemory = "notes/claims.db"\n')
    claim_id = grapharc(elsewhere, "memory", "add", "Tokyo", "population", "14 million", "--source",
                        "census", "--config", str(config), "--json")
    assert claim_id.returncode == 0, claim_id.stderr
    stored = document(claim_id)
    assert stored["memory"] == f"sqlite:{project / 'notes' / 'claims.db'}"  # the file's folder
    assert (project / "notes" / "claims.db").is_file() and list(elsewhere.iterdir()) == []

    env = {**os.environ, "GRAPHARC_MEMORY": str(project / "notes" / "claims.db")}
    found = subprocess.run([sys.executable, "-m", "grapharc.cli", "memory", "search", "Tokyo", "--json"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, timeout=120)
    assert found.returncode == 0, found.stderr
    assert [hit["claim"]["id"] for hit in document(found)["hits"]] == [stored["claim"]["id"]]


def test_an_argument_whose_bytes_are_not_utf8_is_refused_naming_the_field(tmp_path):
    """It reached SQLite as a lone surrogate and was reported as a GraphARC bug."""
    store = f"sqlite:{tmp_path / 'memory.db'}"
    for place, argv in (("subject", [b"Ada \xff", b"wrote", b"notes"]),
                        ("object", [b"Ada", b"wrote", b"notes \xed\xa0\x80"]),
                        ("provenance.source", [b"Ada", b"wrote", b"notes"])):
        source = b"letters \xff.txt" if place == "provenance.source" else b"letters.txt"
        result = subprocess.run([sys.executable, "-m", "grapharc.cli", "memory", "add", *argv,
                                 b"--source", source, b"--memory", store.encode(), b"--json"],
                                capture_output=True, cwd=tmp_path, timeout=120,
                                env={k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")})
        assert result.returncode == 2, result.stderr
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "InvalidClaimError" and f"{place} holds" in error["message"]
        assert "not UTF-8" in error["message"] and "bug" not in result.stderr.decode(errors="replace")



def test_a_long_claim_is_shown_cut_with_its_size_and_whole_with_json(tmp_path):
    notes = "the Analytical Engine notes " + "é" * 10_000
    add(tmp_path, "Ada Lovelace", "wrote", notes)
    found = grapharc(tmp_path, "memory", "search", "Ada Lovelace", "--memory", STORE)
    line = found.stdout.splitlines()[0]
    assert found.returncode == 0 and notes not in line and len(line) < 600
    assert f"{notes[:200]}… [cut: {len(notes.encode()):,} bytes]" in line
    whole = grapharc(tmp_path, "memory", "search", "Ada Lovelace", "--memory", STORE, "--json")
    assert document(whole)["hits"][0]["claim"]["object"] == notes


def test_a_claim_over_the_size_limit_is_refused_naming_its_size_and_the_limit(tmp_path):
    refused = grapharc(tmp_path, "memory", "add", "Ada", "wrote", "x" * 70_000, "--source", "s",
                       "--memory", STORE, "--json")
    assert refused.returncode == 2, refused.stderr
    error = document(refused)["error"]
    assert error["code"] == "ClaimTooLargeError" and "artifact store" in error["hint"]
    assert "is 70,0" in error["message"] and "(object 70,000, " in error["message"]
    assert error["message"].endswith("a claim holds at most 65,536 bytes")
    assert grapharc(tmp_path, "memory", "search", "Ada", "--memory", STORE).returncode == 1  # nothing kept
