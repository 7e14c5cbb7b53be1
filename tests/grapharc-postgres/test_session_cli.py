"""The session commands on a PostgreSQL store: ``--sessions URI`` (or ``--dir URI``, or the
``GRAPHARC_SESSIONS`` setting) lists, shows, decides and prunes the threads in the database;
a bad or unreachable URI is one line and exit 2, as a JSON document with ``--json``."""

from __future__ import annotations

import json

import pytest

from grapharc.examples.approval import CREDIT_DESK, GRAPH_NAME, register_credit_graph
from grapharc.session import SessionManager
from grapharc.testing.cli import run_cli


def document(*args: str) -> dict:
    result = run_cli([*args, "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def credit_threads(postgres_uri: str) -> str:
    """One application paid out (``done``) and one paused for the credit desk (``waiting``)."""
    manager = SessionManager(postgres_uri)
    try:
        register_credit_graph(manager)
        for application, thread, status in (("LN-2204", "done", "completed"),
                                            ("LN-7310", "waiting", "paused")):
            started = manager.start(GRAPH_NAME, {"application_id": application}, thread_id=thread)
            assert started.status == status
    finally:
        manager.close()
    return postgres_uri


def statuses(uri: str, option: str = "--sessions") -> dict[str, str]:
    return {s["thread_id"]: s["status"] for s in document("session", "list", option, uri)["sessions"]}


def test_list_status_approve_and_prune_a_postgres_store_by_uri(credit_threads):
    uri = credit_threads
    assert statuses(uri) == statuses(uri, "--dir") == {"done": "completed", "waiting": "paused"}
    shown = document("session", "status", "waiting", "--sessions", uri)
    assert shown["status"] == "paused" and [h["node"] for h in shown["holds"]] == ["sign_off"]

    pruned = document("session", "prune", "--older-than", "0s", "--sessions", uri)
    assert pruned["removed"] == ["done"] and pruned["checkpoints"] > 0
    assert statuses(uri) == {"waiting": "paused"}

    decided = document("session", "approve", "waiting", "--decider", CREDIT_DESK, "--sessions", uri)
    assert decided["status"] == "completed" and decided["outcome"] == "released"
    manager = SessionManager(uri)
    try:
        assert [e.detail["by"] for e in manager.audit("waiting") if e.kind == "decided"] == [CREDIT_DESK]
    finally:
        manager.close()


def test_the_sessions_setting_may_name_a_uri(credit_threads, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHARC_SESSIONS", credit_threads)
    assert {s["thread_id"] for s in document("session", "list")["sessions"]} == {"done", "waiting"}
    assert not list(tmp_path.iterdir())  # the URI was not taken for a folder to create


@pytest.mark.parametrize(("uri", "code", "words"), [
    ("nosuch://db", "UnknownStoreSchemeError", "unknown store scheme 'nosuch'"),
    ("postgresql://", "PostgresStoreError", "a postgres store needs a server and a database"),
    ("postgresql://postgres@127.0.0.1:1/none", "PostgresStoreError",
     "cannot open the PostgreSQL store postgresql://postgres@127.0.0.1:1/none: connection failed"),
])
@pytest.mark.parametrize("command", [["session", "list"], ["session", "status", "t"],
                                     ["session", "prune", "--older-than", "1d"]])
def test_a_bad_or_unreachable_uri_is_one_line_and_exit_2(postgres_server, command, uri, code, words):
    human = run_cli([*command, "--sessions", uri])
    assert human.exit_code == 2 and human.stdout == ""
    first, *rest = human.stderr.splitlines()
    assert first.startswith(f"error: {words}") and all(line.startswith("hint: ") for line in rest)
    answer = run_cli([*command, "--sessions", uri, "--json"])
    assert answer.exit_code == 2
    error = json.loads(answer.stdout)["error"]
    assert error["code"] == code and error["message"].startswith(words) and "\n" not in error["message"]


def test_the_paused_demos_hint_names_the_postgres_store_and_answers_it(postgres_uri):
    import shlex

    paused = run_cli(["demo", "approval", "run", "--application", "LN-7310", "--thread", "loan-pg",
                      "--sessions", postgres_uri])
    assert paused.exit_code == 0, paused.stderr
    hint = next(line for line in paused.stdout.splitlines() if "answer with: " in line)
    words = shlex.split(hint.split("answer with: ", 1)[1].replace("approved|rejected", "approved"))
    assert words[-2:] == ["--sessions", postgres_uri]

    done = run_cli(words[1:])
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "DONE    thread=loan-pg released"
