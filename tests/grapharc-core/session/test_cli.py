"""The session commands and the credit-approval demo, as a person and a script run them.

The story and the killed run are about the process boundary (a pause outlives its process, a
SIGKILLed run is recovered by another), so they run the real commands as separate processes;
the other tests run the same commands through the real entry point in-process (``run_cli``),
which reports exit codes and errors exactly as the installed command does. Bad input must exit
2 with one line and nothing written.
"""

from __future__ import annotations

import json
import re

import pytest
from session_cli import build_app
from session_procs import cli, wait_for, wait_until

from grapharc.session import SessionManager
from grapharc.testing.cli import CliResult, run_cli


def invoke(*args: str) -> CliResult:
    """The command ``args`` through the real entry point, in this process."""
    return run_cli(args, app=build_app())


def ok(*args: str) -> str:
    """The command's stdout; it must exit 0."""
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def doc(*args: str) -> dict:
    return json.loads(ok(*args, "--json"))


def ok_in_a_process(*args: str) -> str:
    """The command's stdout when run as a process of its own; it must exit 0."""
    code, out, err = cli(*args).finish()
    assert code == 0, err
    return out


@pytest.fixture
def d(directory) -> str:
    return str(directory)


def test_the_credit_story_pauses_exits_and_finishes_in_a_new_process(d):
    out = ok_in_a_process("demo", "approval", "run", "--application", "LN-7310", "--thread", "loan-1",
                          "--dir", d)
    assert out.splitlines()[:6] == [
        "[fetch_application] LN-7310 from Rosalind Achterberg: EUR 24,000.00 over 48 months",
        "[score]             bureau score 702, declared income EUR 4,150.00 a month",
        "[assess]            income not verified yet",
        "[fetch_income]      payroll confirms EUR 3,980.00 a month",
        "[assess]            instalment EUR 630.00 is 16% of verified income: inside the 40% policy",
        "[check_threshold]   EUR 24,000.00 is above the EUR 15,000.00 sign-off limit",
    ]
    assert "PAUSED  thread=loan-1" in out
    assert "waiting: release EUR 24,000.00 to Rosalind Achterberg (customer C-5521" in out
    assert "sign_off runs again from its first line" in out

    status = doc("session", "status", "loan-1", "--dir", d)
    assert status["status"] == "paused" and status["last_node"] == "check_threshold"
    assert status["holds"][0]["deciders"] == ["credit-desk"]

    out = ok_in_a_process("demo", "approval", "resume", "loan-1", "approved", "--dir", d)
    assert out.splitlines() == ["[sign_off]          answer: approved",
                                "[disburse]          EUR 24,000.00 released to Rosalind Achterberg",
                                "DONE    thread=loan-1 released"]
    assert doc("session", "status", "loan-1", "--dir", d)["outcome"] == "released"

    code, _, err = cli("demo", "approval", "resume", "loan-1", "approved", "--dir", d).finish()
    assert code == 2 and "error: thread loan-1 is not paused (it is completed)" in err


def test_under_the_limit_nobody_is_asked(d):
    out = ok("demo", "approval", "run", "--application", "LN-2204", "--thread", "small", "--dir", d)
    assert ("[check_threshold]   EUR 6,500.00 is within the EUR 15,000.00 sign-off limit; "
            "nobody needs to sign") in out
    assert "[sign_off]" not in out and out.rstrip().endswith("DONE    thread=small released")
    assert SessionManager(d).approvals("small") == []


def test_outside_policy_the_application_is_declined_without_asking(d):
    result = invoke("demo", "approval", "run", "--application", "LN-9917", "--dir", d)
    out = result.stdout
    assert result.exit_code == 1 and "outside the 40% policy" in out and "declined" in out.splitlines()[-1]


def test_a_rejection_declines_the_credit(d):
    ok("demo", "approval", "run", "--application", "LN-7310", "--thread", "no", "--dir", d)
    result = invoke("demo", "approval", "resume", "no", "rejected", "--dir", d)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["[sign_off]          answer: rejected",
                                          "[decline]           not released: the credit desk said no",
                                          "DONE    thread=no declined"]


def test_a_run_killed_mid_way_is_recovered_and_each_node_is_audited_once(tmp_path, d, reap):
    ready = tmp_path / "ready"
    runner = reap(cli("demo", "approval", "run", "--application", "LN-7310", "--thread", "killed", "--dir", d,
                      "--lease", "1", env={"GRAPHARC_TEST_BLOCK_PAYROLL": str(ready)}))
    wait_for(ready, runner)
    runner.kill()
    wait_until(lambda: doc("session", "status", "killed", "--dir", d)["reclaimable"])
    listed = ok("session", "list", "--dir", d)
    assert "running*" in listed and "reclaimable" in listed

    refused = invoke("demo", "approval", "resume", "killed", "approved", "--dir", d)
    assert refused.exit_code == 2 and "thread killed is not paused (it is running)" in refused.stderr

    out = ok("demo", "approval", "recover", "killed", "--dir", d)
    assert out.splitlines()[0] == "[fetch_income]      payroll confirms EUR 3,980.00 a month"
    assert "PAUSED  thread=killed" in out
    assert ok("demo", "approval", "resume", "killed", "approved", "--dir", d).rstrip().endswith("released")

    trail = sorted((e.step, e.node) for e in SessionManager(d).audit("killed") if e.kind == "node")
    assert [node for _, node in trail] == ["fetch_application", "score", "assess", "fetch_income", "assess",
                                           "check_threshold", "sign_off", "disburse"]
    assert len(set(trail)) == len(trail)


def test_status_and_list_read_the_store_without_the_graph(d):
    ok("demo", "approval", "run", "--application", "LN-7310", "--thread", "p", "--dir", d)
    ok("demo", "approval", "run", "--application", "LN-2204", "--thread", "q", "--dir", d)
    listed = doc("session", "list", "--dir", d)["sessions"]
    assert {s["thread_id"]: s["status"] for s in listed} == {"p": "paused", "q": "completed"}
    assert doc("session", "list", "--dir", d, "--status", "paused")["sessions"][0]["thread_id"] == "p"
    text = ok("session", "status", "p", "--dir", d)
    assert "status   paused" in text and "waiting  ap-" in text and "decided by credit-desk" in text


def test_prune_from_the_command_line_keeps_the_paused_thread(d):
    ok("demo", "approval", "run", "--application", "LN-7310", "--thread", "keep", "--dir", d)
    ok("demo", "approval", "run", "--application", "LN-2204", "--thread", "gone", "--dir", d)
    report = doc("session", "prune", "--older-than", "0s", "--dir", d)
    assert report["removed"] == ["gone"] and report["count"] == 1 and report["checkpoints"] > 0
    assert report["bytes_freed"] >= 0 and report["bytes_on_disk"] > 0
    assert [s["thread_id"] for s in doc("session", "list", "--dir", d)["sessions"]] == ["keep"]


def test_a_prune_that_removes_nothing_says_so_and_frees_nothing(d):
    ok("demo", "approval", "run", "--application", "LN-2204", "--thread", "young", "--dir", d)
    for _ in range(3):
        assert ok("session", "prune", "--older-than", "30d", "--dir", d) == (
            "nothing to prune: no finished thread is that old; nothing was removed\n")
    report = doc("session", "prune", "--older-than", "30d", "--dir", d)
    assert (report["count"], report["checkpoints"], report["bytes_freed"]) == (0, 0, 0)


def test_a_prune_that_removes_threads_reports_their_checkpoints_and_the_bytes_freed(d):
    for number in range(3):
        ok("demo", "approval", "run", "--application", "LN-2204", "--thread", f"t{number}", "--dir", d)
    text = ok("session", "prune", "--older-than", "0s", "--dir", d)
    assert re.fullmatch(r"removed 3 finished thread\(s\) with [1-9]\d* checkpoint\(s\); "
                        r"freed \d+ bytes \(\d+ on disk now\)\n", text), text


# -- bad input: exit 2, one line, nothing written ---------------------------------------------


def test_an_unknown_thread_exits_2_naming_it(d):
    result = invoke("session", "status", "nope", "--dir", d, "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["message"] == "no session has thread id 'nope'"


def test_a_malformed_duration_exits_2_and_removes_nothing(d):
    ok("demo", "approval", "run", "--application", "LN-2204", "--thread", "stay", "--dir", d)
    result = invoke("session", "prune", "--older-than", "soon", "--dir", d)
    assert result.exit_code == 2 and "cannot read 'soon' as a duration" in result.stderr
    assert SessionManager(d).get("stay").status == "completed"


def test_a_session_directory_that_is_a_file_exits_2(tmp_path):
    path = tmp_path / "file"
    path.write_text("not a directory")
    for args in (["session", "list"], ["session", "status", "x"],
                 ["demo", "approval", "run", "--application", "LN-2204"]):
        result = invoke(*args, "--dir", str(path))
        assert result.exit_code == 2, args
        assert "is a file" in result.stderr or "no session has thread id" in result.stderr
    assert path.read_text() == "not a directory"


def test_a_corrupt_session_database_exits_2_and_is_left_as_it_was(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    db = folder / "sessions.db"
    db.write_bytes(b"this is not SQLite at all" * 100)
    before = db.read_bytes()
    for args in (["session", "list"], ["session", "status", "x"], ["session", "prune", "--older-than", "1d"]):
        result = invoke(*args, "--dir", str(folder))
        assert result.exit_code == 2, args
        assert f"cannot use {db} as a session store" in result.stderr
    assert db.read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["demo", "approval", "run", "--application", "LN-0000"], "no application 'LN-0000'"),
    (["demo", "approval", "resume", "ghost", "approved"], "no session has thread id 'ghost'"),
    (["session", "list", "--status", "sleeping"], "unknown status 'sleeping'"),
])
def test_other_bad_input_exits_2_with_one_line(d, args, message):
    result = invoke(*args, "--dir", d)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output


def test_a_wrong_decision_word_or_decider_is_refused_and_the_hold_stays(d):
    ok("demo", "approval", "run", "--application", "LN-7310", "--thread", "held", "--dir", d)
    maybe = invoke("demo", "approval", "resume", "held", "maybe", "--dir", d)
    assert maybe.exit_code == 2 and "must be one of approved, rejected" in maybe.stderr
    intruder = invoke("demo", "approval", "resume", "held", "approved", "--decider", "intern", "--dir", d)
    assert intruder.exit_code == 2 and "'intern' may not decide" in intruder.stderr
    assert SessionManager(d).get("held").holds[0].state == "open"


def answered_as_hinted(paused_output: str, decision: str) -> list[str]:
    """The command a paused demo's hint says answers it, with ``decision`` chosen, as words."""
    import shlex

    hint = next(line for line in paused_output.splitlines() if "answer with: " in line)
    words = shlex.split(hint.split("answer with: ", 1)[1].replace("approved|rejected", decision))
    assert words[0] == "grapharc"
    return words[1:]


def test_the_paused_demos_hint_answers_it_on_the_store_it_was_given(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    paused = run_cli(["demo", "approval", "run", "--application", "LN-7310", "--thread", "loan-h",
                      "--dir", "./sess"])
    assert paused.exit_code == 0 and "PAUSED  thread=loan-h" in paused.stdout

    monkeypatch.chdir(tmp_path / "elsewhere")  # the hint is followed from another folder
    done = run_cli(answered_as_hinted(paused.stdout, "approved"))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "DONE    thread=loan-h released"
