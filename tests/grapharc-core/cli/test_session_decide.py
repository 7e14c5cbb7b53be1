"""``grapharc session approve|reject``: answer a paused thread of any graph this CLI can rebuild."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from grapharc.cli.main import build_app


def grapharc(*args: str):
    return CliRunner().invoke(build_app(), list(args))


def test_a_paused_credit_thread_is_approved_by_the_desk_and_only_by_the_desk(clean_workdir):
    paused = grapharc("demo", "approval", "run", "--application", "LN-7310", "--dir", "s", "--thread", "t1")
    assert "PAUSED" in paused.stdout
    refused = grapharc("session", "approve", "t1", "--dir", "s", "--decider", "intern")
    assert refused.exit_code == 2 and "may be decided by credit-desk" in refused.stderr
    done = grapharc("session", "approve", "t1", "--dir", "s", "--decider", "credit-desk", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["outcome"] == "released"


def test_a_rejection_ends_the_thread_and_an_unknown_thread_is_refused(clean_workdir):
    grapharc("demo", "approval", "run", "--application", "LN-7310", "--dir", "s", "--thread", "t1")
    rejected = grapharc("session", "reject", "t1", "--dir", "s", "--decider", "credit-desk", "--json")
    assert json.loads(rejected.stdout)["outcome"] == "declined" and rejected.exit_code == 1
    missing = grapharc("session", "approve", "nope", "--dir", "s")
    assert missing.exit_code == 2 and "nope" in missing.stderr
