"""Every program in examples/ runs as its own process and prints what its docstring promises.

Each test runs one example with this interpreter from a scratch folder (so nothing lands in the
repository), as its README line says to, and checks its output, and where the example leaves
a file behind (a trace, a claims file) reads that file independently.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.stores.uris import open_store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PATIENCE_SECONDS = 180  # a bound on a stuck example; nothing is measured with it


def run_example(relative: str, *args: str, cwd: Path) -> list[str]:
    """Run ``examples/relative`` with ``args``; its stdout lines (it must exit 0)."""
    done = subprocess.run([sys.executable, str(EXAMPLES / relative), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=PATIENCE_SECONDS, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def test_first_graph_runs_refuses_an_undeclared_write_and_reads_its_trace_back(tmp_path):
    trace = tmp_path / "run.jsonl"
    lines = run_example("first_graph.py", str(trace), cwd=tmp_path)

    assert lines[0] == ("result: {'text': 'checkout is down', 'label': 'outage', "
                        "'reply': '[outage] we are on it'}")
    assert lines[1] == "run: completed after 2 iterations"
    assert lines[2] == "refused: node 'sneaky' wrote 'text' but declared writes={'label'}"
    run_id = lines[3].split()[3]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    ours = [(event["phase"], event.get("node")) for event in events if event.get("run_id") == run_id]
    assert ours == [("run_start", None), ("start", "classify"), ("end", "classify"),
                    ("start", "respond"), ("end", "respond"), ("run_end", None)]
    printed = [line.split()[:3] for line in lines[4:]]
    assert printed == [["run_start"], ["start", "classify"], ["end", "classify", "{'label':"],
                       ["start", "respond"], ["end", "respond", "{'reply':"], ["run_end"]]
    assert any(event.get("node") == "sneaky" and event["phase"] == "error" for event in events)


def test_governed_plan_refuses_the_denied_proposal_with_its_reason_then_runs_the_admitted_one(tmp_path):
    lines = run_example("governed_plan.py", cwd=tmp_path)

    assert lines == [
        "round 1: rejected, executed=False",
        "round 2: admitted, executed=True",
        "refused: edge_denied at edges[1]: edge inspect -> drop_database: rule says deny",
        "stopped: goal_met",
        "state: cause='stale cache' fixed=True",
    ]


def test_agent_with_policy_allows_asks_and_denies_by_the_documents_rules(tmp_path):
    lines = run_example("agent_with_policy.py", cwd=tmp_path)

    assert lines[0].startswith("asked: allow tool write_file") and "(rule writes)" in lines[0]
    calls = [line.split()[:4] for line in lines[1:4]]
    assert calls == [["read_file", "allow", "rule=reads", "outcome=ok"],
                     ["run_command", "deny", "rule=no-shell", "outcome=not"],
                     ["write_file", "ask", "rule=writes", "outcome=ok"]]
    assert lines[2].endswith("no shell in this workspace")
    assert lines[4:] == ["answer: Wrote summary.txt: the checkout is slow because of a stale cache.",
                         "summary.txt: checkout is slow: stale cache",
                         "notes.txt still there: True"]


def test_approval_from_another_process_pauses_then_the_second_process_approves_and_finishes(tmp_path):
    lines = run_example("approval_from_another_process.py", cwd=tmp_path)

    assert lines[0].startswith("first process: thread approval-example is paused, waiting on ap-")
    approval = lines[0].rsplit(" ", 1)[1]
    assert "write_file" in lines[1]
    assert lines[2] == "release.txt before the approval: False"
    assert lines[3] == "second process: approved by alice, answer: 'Wrote release.txt from the draft.'"
    assert lines[4] == (f"first process again: thread approval-example is completed, "
                        f"{approval} approved by alice")
    assert lines[5] == "release.txt after the approval: v1.2 ships"


def test_served_graph_is_driven_by_langgraph_sdk_and_the_server_stops_cleanly(tmp_path):
    lines = run_example("served_graph_sdk.py", cwd=tmp_path)

    assert lines[0].startswith("serving at http://127.0.0.1:")
    assert lines[1].startswith("thread: ")
    assert lines[2:] == ["update: {'label': {'label': 'outage'}}",
                         "state: {'text': 'checkout is down', 'label': 'outage'}",
                         "thread status: idle",
                         "server stopped, exit code 0"]


def test_claim_memory_keeps_claims_and_their_correction_in_the_sqlite_file(tmp_path):
    claims = tmp_path / "claims.db"
    lines = run_example("claim_memory.py", str(claims), cwd=tmp_path)

    assert lines[0] == "corrected: 14 million -> 13.96 million"
    assert lines[1] == "claims.db: 3 current claims, 4 stored"
    assert lines[2] == "context for 'What did Ada Lovelace do?':"
    assert lines[3].startswith("- Ada Lovelace | worked with | Charles Babbage (source: letters.txt;")
    assert lines[4].startswith("- Charles Babbage | designed | the Analytical Engine (source: letters.txt;")
    assert lines[5:] == ["context for 'How many people live in Tokyo?':",
                         "- Tokyo | population | 13.96 million "
                         "(source: census-2025.csv; observed 2026-02-01T00:00:00+00:00)"]
    store = open_store(f"sqlite:{claims}", "claims")
    try:
        stored = store.all(include_superseded=True)
    finally:
        store.close()
    assert sorted(claim.object for claim in stored) == [
        "13.96 million", "14 million", "Charles Babbage", "the Analytical Engine"]


def test_custom_plugin_kind_is_registered_admitted_and_run(tmp_path):
    lines = run_example("custom_plugin/use_plugin.py", cwd=tmp_path)

    assert "kind 'shout' registered by shout-plugin" in lines
    assert lines[-2:] == ["admission: admitted",
                          "state: {'goal': 'hello plugins', 'shouted': 'HELLO PLUGINS!'}"]


@pytest.mark.parametrize("example", sorted(path.relative_to(EXAMPLES).as_posix()
                                           for path in EXAMPLES.rglob("*.py")))
def test_each_example_is_listed_in_the_readme_and_opens_with_its_docstring(example):
    source = (EXAMPLES / example).read_text()

    assert f"`{example}`" in (EXAMPLES / "README.md").read_text()
    assert source.startswith('"""') and len(source.splitlines()) <= 100
