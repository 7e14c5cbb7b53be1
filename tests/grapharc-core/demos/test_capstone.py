"""``grapharc demo capstone`` and ``build_capstone``: only verified claims reach memory or an answer."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc.examples.capstone import (
    AUTHOR_SCRIPT,
    QUESTION,
    SOURCE_NAME,
    CapstoneState,
    build_capstone,
    run_capstone,
)
from grapharc.examples.demo_choices import ReviewScenario
from grapharc.memory import Claim, InMemoryClaimStore
from grapharc.memory.verify import ReviewerNotIndependentError
from grapharc.models.scripted import ScriptedChatModel

IDS = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{16}\b"
                 r"|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
                 r"|capstone-[0-9a-f]{12}")


class CountingStore(InMemoryClaimStore):
    """An in-process store that counts every call that could write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def add(self, claim: Claim) -> Claim:
        self.writes += 1
        return super().add(claim)

    def add_many(self, claims: Sequence[Claim]) -> list[Claim]:
        self.writes += 1
        return super().add_many(claims)

    def supersede(self, old_id: str, new_claim: Claim) -> Claim:
        self.writes += 1
        return super().supersede(old_id, new_claim)


def run_graph(reviewer_reply: str, store: InMemoryClaimStore, tmp_path: Path) -> tuple[CapstoneState,
                                                                                      ScriptedChatModel]:
    author = ScriptedChatModel(responses=list(AUTHOR_SCRIPT))
    reviewer = ScriptedChatModel(responses=[reviewer_reply], cycle=True)
    graph = build_capstone(author, reviewer, store, trace=tmp_path / "t.jsonl", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "capstone-test"}}
    graph.invoke({"question": QUESTION}, config)
    return CapstoneState.model_validate(graph.get_state(config).values), author


def test_only_the_claims_the_reviewer_supported_reach_memory_and_the_answer(tmp_path: Path) -> None:
    outcome = run_capstone(trace=tmp_path / "t.jsonl")

    assert outcome.demonstrated, [c for c in outcome.checks if not c.ok]
    verdicts = [(r["object"], r["verdict"], r["reviewer_calls"]) for r in outcome.state["reviewed"]]
    assert verdicts[0] == ("payment gateway timeouts", "not_in_source", 0)
    assert verdicts[1][1:] == ("not_supported", 1)
    written = outcome.state["written"]
    assert [c["predicate"] for c in written] == ["caused by", "fixed by"]
    assert all(c["provenance"]["source"] == SOURCE_NAME and c["provenance"]["run_id"] == outcome.run.run_id
               for c in written)
    assert outcome.details["memory_writes"] == 2 and outcome.details["reviewer_calls"] == 3
    assert all(f"| {c['object']} (source: {SOURCE_NAME}" in outcome.state["context"] for c in written)
    assert outcome.state["answer"] and outcome.status == "answered"


def test_a_reviewer_that_rejects_everything_yields_no_answer_and_zero_memory_writes(tmp_path: Path) -> None:
    store = CountingStore()

    state, author = run_graph('{"supported": false, "reason": "no"}', store, tmp_path)

    assert store.writes == 0 and store.all(include_superseded=True) == []
    assert state.answer == "" and state.written == [] and len(author.calls) == 1
    assert [r.verification.supported for r in state.reviewed] == [False] * 4


def test_a_reviewer_that_supports_everything_still_never_writes_a_fabricated_quote(tmp_path: Path) -> None:
    store = CountingStore()

    state, _ = run_graph('{"supported": true, "reason": "yes"}', store, tmp_path)

    objects = [claim.object for claim in store.all()]
    assert "payment gateway timeouts" not in objects and len(objects) == 3 and store.writes == 1
    assert state.answer and len(state.written) == 3


def test_build_capstone_refuses_one_object_as_author_and_reviewer(tmp_path: Path) -> None:
    model = ScriptedChatModel()

    with pytest.raises(ReviewerNotIndependentError):
        build_capstone(model, model, InMemoryClaimStore(), trace=None)
    build_capstone(model, ScriptedChatModel(), InMemoryClaimStore(), trace=None)


def test_the_reject_all_scenario_leaves_a_durable_store_exactly_as_it_was(workdir: Path, grapharc) -> None:
    uri = f"sqlite:{workdir / 'memory.db'}"
    assert grapharc("capstone", "--memory", uri)[0] == 0

    code, out, _ = grapharc("capstone", "--memory", uri, "--scenario", "reject-all", "--json")

    document = json.loads(out)
    assert code == 0 and document["ok"] is True and document["status"] == "no answer"
    assert document["memory_writes"] == 0 and document["state"]["answer"] is None
    assert document["state"]["memory"].count("\n") == 1  # the two earlier claims were recalled
    from grapharc.memory import SQLiteMemoryStore

    store = SQLiteMemoryStore(workdir / "memory.db")
    try:
        assert len(store.all(include_superseded=True)) == 2
    finally:
        store.close()


def test_a_second_process_recalls_the_first_ones_claims_and_writes_nothing_twice(workdir: Path,
                                                                                 process) -> None:
    uri = f"sqlite:{workdir / 'memory.db'}"
    first, second = (process("capstone", "--memory", uri, "--json") for _ in range(2))

    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert one["memory_writes"] == 2 and two["memory_writes"] == 0
    assert one["state"]["memory"] == "" and f"run {one['run_id']})" in two["state"]["memory"]
    assert two["state"]["answer"]


@pytest.mark.parametrize(("args", "says"), [
    (["--scenario", "reject-all", "--reviewer-model", "mock/x"], "takes no --reviewer-model"),
    (["--scenario", "nope"], "--scenario"),
    (["--memory", "nosuch:x"], "unknown store scheme 'nosuch'"),
])
def test_capstone_bad_input_exits_2(args: list[str], says: str, workdir: Path, grapharc) -> None:
    code, out, err = grapharc("capstone", *args)

    assert code == 2 and out == "" and says in err and "Traceback" not in err


def test_capstone_warns_when_author_and_reviewer_reach_one_vendor_and_exits_1_without_an_answer(
        workdir: Path, grapharc) -> None:
    code, out, err = grapharc("capstone", "--model", "mock/a", "--reviewer-model", "mock/b", "--json")

    document = json.loads(out)
    assert code == 1 and document["ok"] is False and document["status"] == "no answer"
    assert err.startswith("warning: the author (mock/a) and the reviewer (mock/b) both reach grapharc")
    assert document["independence"]["different_providers"] is False


@pytest.mark.parametrize("scenario", list(ReviewScenario))
def test_capstone_output_is_stable_and_its_json_is_one_document(scenario: ReviewScenario, workdir: Path,
                                                                grapharc) -> None:
    runs = [grapharc("capstone", "--scenario", scenario, "--json") for _ in range(2)]
    human = [grapharc("capstone", "--scenario", scenario) for _ in range(2)]

    assert [code for code, _, _ in runs + human] == [0, 0, 0, 0]
    assert json.loads(runs[0][1])["stage"] == "capstone"
    assert IDS.sub("<id>", runs[0][1]) == IDS.sub("<id>", runs[1][1])
    assert IDS.sub("<id>", human[0][1]) == IDS.sub("<id>", human[1][1])


def test_a_budget_that_stops_the_research_exits_1_with_nothing_written(workdir: Path, grapharc) -> None:
    code, out, _ = grapharc("capstone", "--max-tokens", "50", "--json")

    document = json.loads(out)
    assert code == 1 and document["status"] == "exhausted" and document["run"]["status"] == "budget_exceeded"
    assert document["memory_writes"] == 0 and document["reviewer_calls"] == 0
