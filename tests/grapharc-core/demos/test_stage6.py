"""``grapharc demo stage6``: three runs against one store, in one process or three."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from grapharc.examples import stage6
from grapharc.examples.stage6 import CHAT, POSTMORTEM, run_stage6

HEX_IDS = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{16}\b"
                     r"|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
                     r"|stage6-run\d-[0-9a-f]{12}")


def without_ids(text: str) -> str:
    return HEX_IDS.sub("<id>", text)


def test_run_3_reuses_earlier_facts_and_sees_the_dead_end_with_its_provenance(tmp_path: Path) -> None:
    outcome = run_stage6(trace=tmp_path / "t.jsonl")

    assert outcome.demonstrated, [c for c in outcome.checks if not c.ok]
    runs = outcome.details["runs"]
    first, second, third = (run["run_id"] for run in runs)
    claims = {c["object"]: c for c in outcome.state["claims"]}
    guess, started = claims["payment gateway timeouts"], claims["14:02 UTC"]
    cause = next(c for c in claims.values() if c["provenance"]["source"] == POSTMORTEM.name)
    assert guess["provenance"] == {"source": CHAT.name, "observed_at": "2026-03-14T14:10:00Z",
                                   "run_id": first}
    assert guess["superseded_by"] == cause["id"] and cause["provenance"]["run_id"] == second
    assert started["provenance"]["run_id"] == first and started["superseded_by"] is None
    memory = runs[2]["memory"].splitlines()
    assert any(line.startswith("- checkout latency spike | caused by | payment gateway timeouts "
                               f"(source: {CHAT.name}; observed 2026-03-14T14:10:00+00:00; run {first}")
               and line.endswith(f"superseded by {cause['id']})") for line in memory)
    assert any(f"| 14:02 UTC (source: {CHAT.name}" in line and f"run {first})" in line for line in memory)
    assert any(line.startswith(f"- checkout latency spike | caused by | {cause['object']} (source: "
                               f"{POSTMORTEM.name}") and f"run {second})" in line for line in memory)
    assert runs[2]["recorded"] == [] and runs[2]["run_id"] == third == outcome.run.run_id
    assert outcome.state["answer"].startswith("The last spike started at 14:02 UTC")


def test_a_correction_that_contradicts_nothing_is_not_demonstrated(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    same = dataclasses.replace(stage6.PLANS[1], script='{"cause": "payment gateway timeouts"}')
    monkeypatch.setattr(stage6, "PLANS", (stage6.PLANS[0], same, stage6.PLANS[2]))

    outcome = run_stage6(trace=tmp_path / "t.jsonl")

    failed = [check.claim for check in outcome.checks if not check.ok]
    assert not outcome.demonstrated
    assert any("superseded it on purpose" in claim for claim in failed)
    assert any("saw the dead end" in claim for claim in failed)
    assert all(claim["superseded_by"] is None for claim in outcome.state["claims"])


@pytest.mark.parametrize("scheme", ["sqlite", "ladybug"])
def test_a_durable_store_carries_the_runs_across_three_separate_processes(scheme: str, workdir: Path,
                                                                          process) -> None:
    if scheme == "ladybug":
        pytest.importorskip("grapharc.memory.ladybug.store")
    uri = f"{scheme}:{workdir / 'memory.store'}"

    documents = []
    for number in (1, 2, 3):
        result = process("stage6", "--memory", uri, "--run", str(number), "--json")
        assert result.returncode == 0, result.stdout + result.stderr
        documents.append(json.loads(result.stdout))

    first, second, third = (d["runs"][0] for d in documents)
    assert [first["run"], second["run"], third["run"]] == [1, 2, 3]
    assert len({first["run_id"], second["run_id"], third["run_id"]}) == 3
    assert len(first["recorded"]) == 2 and second["superseded"] and third["recorded"] == []
    guess = second["superseded"][0]
    assert guess in first["recorded"]
    dead_end = next(line for line in third["memory"].splitlines() if "payment gateway timeouts" in line)
    assert f"run {first['run_id']}" in dead_end and f"superseded by {second['recorded'][0]}" in dead_end
    assert f"run {second['run_id']})" in third["memory"]
    assert all(d["ok"] for d in documents)


def test_the_memory_setting_picks_the_demo_store_and_a_bare_path_is_a_sqlite_file(
        workdir: Path, grapharc, monkeypatch: pytest.MonkeyPatch) -> None:
    from grapharc.memory.sqlite.store import SQLiteMemoryStore

    (workdir / "grapharc.toml").write_text('[grapharc]\nmemory = "claims.db"\n')
    code, out, err = grapharc("stage6", "--run", "1", "--json")  # --run needs a durable store

    assert code == 0, err
    assert json.loads(out)["sources"]["memory"] == "file"
    store = SQLiteMemoryStore(workdir / "claims.db")
    assert len(store.all()) == 2
    store.close()
    monkeypatch.setenv("GRAPHARC_MEMORY", "memory:")  # env beats the file
    code, _, err = grapharc("stage6", "--run", "2")
    assert code == 2 and "memory: is gone when the process ends" in err


def test_run_3_against_an_empty_durable_store_exits_1(workdir: Path, grapharc) -> None:
    code, out, _ = grapharc("stage6", "--memory", f"sqlite:{workdir / 'empty.db'}", "--run", "3", "--json")

    document = json.loads(out)
    assert code == 1 and document["ok"] is False
    failed = [check["claim"] for check in document["checks"] if not check["ok"]]
    assert any("reused 0 current facts" in claim for claim in failed)
    assert any("saw the dead end" in claim for claim in failed)


@pytest.mark.parametrize(("args", "says"), [
    (["--run", "2"], "--run 2 needs a store that outlives the process"),
    (["--run", "4"], "--run"),
    (["--memory", "nosuch:x"], "unknown store scheme 'nosuch'"),
    (["--memory", "sqlite:"], "names no"),
])
def test_stage6_bad_input_exits_2(args: list[str], says: str, workdir: Path, grapharc) -> None:
    code, out, err = grapharc("stage6", *args)

    assert code == 2 and out == "" and says in err and "Traceback" not in err


def test_a_model_spec_that_names_no_model_is_refused_before_the_store_is_created(workdir: Path,
                                                                                 grapharc) -> None:
    before = sorted(workdir.iterdir())
    code, out, err = grapharc("stage6", "--model", "rejected", "--memory", "fresh.db")

    assert code == 2 and out == "" and "rejected" in err and "Traceback" not in err
    assert sorted(workdir.iterdir()) == before  # no fresh.db left behind by a refused run


def test_run_1_refuses_a_store_that_already_holds_the_runs(workdir: Path, grapharc) -> None:
    uri = f"sqlite:{workdir / 'memory.db'}"
    assert grapharc("stage6", "--memory", uri)[0] == 0

    code, out, err = grapharc("stage6", "--memory", uri, "--run", "1")

    assert code == 2 and out == "" and "already holds claims about 'checkout latency spike'" in err
    assert grapharc("stage6", "--memory", uri, "--run", "3")[0] == 0


def test_a_model_that_only_echoes_is_not_demonstrated_and_exits_1(workdir: Path, grapharc) -> None:
    code, out, _ = grapharc("stage6", "--model", "mock/echo", "--json")

    document = json.loads(out)
    assert code == 1 and document["ok"] is False and document["model"] == "mock/echo"


def test_stage6_output_is_stable_and_its_json_is_one_document(workdir: Path, grapharc) -> None:
    runs = [grapharc("stage6", "--json") for _ in range(2)]
    human = [grapharc("stage6") for _ in range(2)]

    assert [code for code, _, _ in runs + human] == [0, 0, 0, 0]
    documents = [json.loads(out) for _, out, _ in runs]
    assert documents[0]["stage"] == "stage6" and len(documents[0]["runs"]) == 3
    assert without_ids(runs[0][1]) == without_ids(runs[1][1])
    assert without_ids(human[0][1]) == without_ids(human[1][1])
    assert "result    : demonstrated: " in human[0][1]


def test_a_budget_that_stops_the_runs_exits_1(workdir: Path, grapharc) -> None:
    code, out, _ = grapharc("stage6", "--max-tokens", "50", "--json")

    document = json.loads(out)
    assert code == 1 and document["status"] == "exhausted"
    assert [run["status"] for run in document["runs"]] == ["budget_exceeded"] * 3
    assert document["state"]["claims"] == []
