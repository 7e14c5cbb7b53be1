"""Numbers that cannot be kept are refused where they enter; a damaged row is flagged, not fatal."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from session_procs import cli

from grapharc.session import Approvers, SessionError, SessionManager


@pytest.mark.parametrize("lease", [0, -1, math.nan, math.inf, 1e308, True, "30", 1e-320, 0.5])
def test_a_lease_that_cannot_be_kept_is_refused(tmp_path: Path, lease: object) -> None:
    with pytest.raises(SessionError, match="a lease must be a number of seconds"):
        SessionManager(tmp_path / "s", lease_seconds=lease)  # type: ignore[arg-type]


@pytest.mark.parametrize("ttl", [0, -5, math.nan, math.inf, 1e308])
def test_an_approval_ttl_that_cannot_be_kept_is_refused(ttl: float) -> None:
    with pytest.raises(SessionError, match="ttl"):
        Approvers(ttl=ttl)


def test_one_unreadable_row_is_flagged_and_every_other_session_is_still_listed(
        manager: SessionManager, directory: Path) -> None:
    manager.create("chain", thread_id="good")
    manager.create("chain", thread_id="bad")
    with sqlite3.connect(directory / "sessions.db") as conn:
        conn.execute("UPDATE sessions SET lease_expires_at = 1e308, status = 'running' "
                     "WHERE thread_id = 'bad'")
    listed = {s.thread_id: s for s in manager.list()}
    assert set(listed) == {"good", "bad"}
    assert listed["bad"].damaged == "unreadable lease_expires_at=1e+308" and listed["good"].damaged is None
    assert listed["bad"].to_dict(0.0)["lease_expires_at"] is None

    code, out, err = cli("session", "list", "--dir", str(directory), "--json").finish()
    assert code == 0, err
    rows = {row["thread_id"]: row for row in json.loads(out)["sessions"]}
    assert rows["bad"]["damaged"].startswith("unreadable") and rows["good"]["damaged"] is None


def test_the_text_views_mark_a_damaged_row_and_never_print_none_for_its_time(
        manager: SessionManager, directory: Path) -> None:
    manager.create("chain", thread_id="good")
    manager.create("chain", thread_id="bad")
    with sqlite3.connect(directory / "sessions.db") as conn:
        conn.execute("UPDATE sessions SET updated_at = 1e308 WHERE thread_id = 'bad'")

    code, out, err = cli("session", "list", "--dir", str(directory)).finish()
    assert code == 0, err
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:3]}
    assert rows["bad"][2:4] == ["created!", "unreadable"] and rows["good"][2] == "created"
    assert "! bad: damaged record, unreadable updated_at=1e+308" in out

    code, out, err = cli("session", "status", "bad", "--dir", str(directory)).finish()
    assert code == 0, err
    assert "updated  unreadable" in out and "damaged  unreadable updated_at=1e+308" in out
    assert "None" not in out


def test_the_demo_refuses_a_lease_it_cannot_keep_and_writes_nothing(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    for lease in ("1e308", "nan", "inf", "-1", "1e-320"):
        code, out, _err = cli("demo", "approval", "run", "--application", "LN-7310", "--dir",
                              str(sessions), "--lease", lease, "--json").finish()
        message = json.loads(out)["error"]["message"]
        assert code == 2 and "'--lease': must be a number of seconds at least 1 and at most 86400" in message
    assert not sessions.exists()
