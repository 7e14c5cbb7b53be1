"""``grapharc cron list | add | delete``: schedules in a session store, each command a process of its
own, results on stdout (one JSON document with ``--json``), exit 0 done, 1 nothing to delete, 2
refused input naming what is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def grapharc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("GRAPHARC_") or name == "GRAPHARC_DEBUG"}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", "cron", *args, "--sessions", "sessions"],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_a_schedule_added_is_listed_by_another_process_and_deleted(tmp_path: Path) -> None:
    added = grapharc(tmp_path, "add", "--assistant", "credit", "--schedule", "*/15 * * * *", "--input",
                     '{"application_id": "東京-1"}', "--timezone", "Europe/Paris", "--json")
    assert added.returncode == 0, added.stderr
    cron = json.loads(added.stdout)
    assert (cron["ok"], cron["schedule"], cron["timezone"], cron["thread_id"], cron["payload"]["input"]) == (
        True, "*/15 * * * *", "Europe/Paris", None, {"application_id": "東京-1"})
    assert cron["next_run_date"] is not None and cron["on_run_completed"] == "delete"
    listed = json.loads(grapharc(tmp_path, "list", "--json").stdout)
    assert [c["cron_id"] for c in listed["crons"]] == [cron["cron_id"]]
    text = grapharc(tmp_path, "list")
    assert text.returncode == 0 and cron["cron_id"] in text.stdout and "credit on a new thread" in text.stdout
    gone = grapharc(tmp_path, "delete", cron["cron_id"], "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout) == {"ok": True, "deleted": cron["cron_id"]}
    assert json.loads(grapharc(tmp_path, "list", "--json").stdout)["crons"] == []
    again = grapharc(tmp_path, "delete", cron["cron_id"], "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["error"]["code"] == "UnknownCronError"


@pytest.mark.parametrize(("option", "value", "named"), [
    ("--schedule", "every tuesday", "'every tuesday'"),
    ("--timezone", "Mars/Olympus", "'Mars/Olympus'"),
    ("--end-time", "next week", "'next week'"),
    ("--input", "[1, 2]", "--input must be a JSON object"),
    ("--thread", "no-such-thread", "'no-such-thread'"),
])
def test_a_bad_option_is_refused_naming_it_and_nothing_is_added(tmp_path: Path, option: str, value: str,
                                                                  named: str) -> None:
    asked = {"--schedule": "* * * * *", option: value}
    refused = grapharc(tmp_path, "add", "--assistant", "credit", *(p for pair in asked.items() for p in pair))
    assert refused.returncode == 2 and named in refused.stderr and refused.stdout == ""
    assert "Traceback" not in refused.stderr
    assert json.loads(grapharc(tmp_path, "list", "--json").stdout)["crons"] == []


def test_listing_a_folder_with_no_store_creates_nothing(tmp_path: Path) -> None:
    listed = grapharc(tmp_path, "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == {"ok": True, "crons": []}
    assert not (tmp_path / "sessions").exists()
