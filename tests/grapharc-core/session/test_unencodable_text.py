"""Text a session store cannot keep (a lone surrogate: what bytes that were not UTF-8 decode to) is
refused quoting it, from the command line as from the library, and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from grapharc.session import SessionManager


def test_a_session_thread_id_whose_bytes_are_not_utf8_is_refused_quoting_it(tmp_path):
    """``grapharc session status`` and ``approve`` passed it to SQLite and called it a GraphARC bug."""
    sessions = tmp_path / "sessions"
    SessionManager(sessions).close()  # the store's database exists (with none, every thread is unknown)
    for argv in ([b"session", b"status", b"t-\xed\xa0\x80"],
                 [b"session", b"approve", b"t-\xff", b"--decider", b"me"]):
        result = subprocess.run([sys.executable, "-m", "grapharc.cli", *argv, b"--sessions", bytes(sessions),
                                 b"--json"], capture_output=True, cwd=tmp_path, timeout=120,
                                env={k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")})
        assert result.returncode == 2, result.stderr
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "UnstorableTextError" and "which is not text" in error["message"]
        assert "bug" not in result.stderr.decode(errors="replace") + error["hint"]


def test_a_turn_or_event_holding_unencodable_text_is_refused_and_the_thread_runs_on(directory):
    from session_graphs import register_all

    from grapharc.session.errors import UnstorableTextError

    manager = SessionManager(directory)
    register_all(manager)
    manager.create("chain", thread_id="t")
    for refused in (lambda: manager.run("t", {"log": ["n0 \udc80"]}),
                    lambda: manager.post_event("t", "note", {"text": "\ud800"}),
                    lambda: manager.create("chain", thread_id="t\udcff")):
        try:
            refused()
        except UnstorableTextError as error:
            assert "which is not text" in str(error)
        else:
            raise AssertionError("unencodable text was accepted")
    assert manager.get("t").status == "created" and manager.events("t") == []
    assert [entry.kind for entry in manager.audit("t")] == ["created"]
    assert [s.thread_id for s in manager.list()] == ["t"]
    assert manager.run("t", {}).status == "completed"
