"""A run's tenant and labels reach its trace, and metrics/cost group by them."""

from __future__ import annotations

import json

import pytest

from grapharc import GraphARC, GraphARCState
from grapharc.models import get_model
from grapharc.observe.cost import cost
from grapharc.observe.metrics import metrics
from grapharc.runtime import RunInputError
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    question: str = ""
    answer: str = ""


def answering_graph(trace):
    model = get_model("mock/x", responses=["an answer"], cycle=True)

    def answer(state: State) -> dict:
        return {"answer": model.invoke(state.question).content}

    graph = GraphARC(State, name="attributed", trace=trace)
    graph.add_node("answer", answer, writes={"answer"})
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile()


def test_tenant_and_labels_set_per_run_are_on_its_run_events(tmp_path):
    compiled = answering_graph(tmp_path / "t.jsonl")
    compiled.invoke({"question": "q"}, {"metadata": {"tenant": "acme", "labels": {"team": "core"}}})
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    runs = [e for e in events if e["phase"] in ("run_start", "run_end")]
    assert [(e["tenant"], e["labels"]) for e in runs] == [("acme", {"team": "core"})] * 2


def test_metrics_and_cost_group_runs_by_tenant(tmp_path):
    path = tmp_path / "t.jsonl"
    compiled = answering_graph(path)
    for tenant in ("acme", "acme", "globex"):
        compiled.invoke({"question": "how much?"}, {"metadata": {"tenant": tenant}})
    by_metrics = metrics(path, by="tenant").to_document()
    by_cost = cost(path, by="tenant").to_document()
    assert set(by_metrics["groups"]) == {"acme", "globex"}
    acme, globex = by_metrics["groups"]["acme"], by_metrics["groups"]["globex"]
    assert acme["runs"] == 2 and globex["runs"] == 1
    assert acme["tokens"]["total"] == 2 * globex["tokens"]["total"] > 0
    assert by_cost["groups"]["acme"]["tokens"] == acme["tokens"]["total"]


@pytest.mark.parametrize("metadata", [{"tenant": ""}, {"tenant": 7}, {"labels": ["a"]},
                                      {"labels": {"k": 1}}, {"tenant": "x" * 500}])
def test_malformed_tenant_or_labels_are_refused_before_the_run(tmp_path, metadata):
    compiled = answering_graph(tmp_path / "t.jsonl")
    with pytest.raises(RunInputError):
        compiled.invoke({"question": "q"}, {"metadata": metadata})
    assert not (tmp_path / "t.jsonl").exists() or "run_start" not in (tmp_path / "t.jsonl").read_text()


def test_a_runs_tenant_is_kept_case_folded_so_its_spellings_are_one_tenant(tmp_path):
    path = tmp_path / "t.jsonl"
    compiled = answering_graph(path)
    for tenant in ("ACME", "acme", "Ａｃｍｅ"):
        compiled.invoke({"question": "q"}, {"metadata": {"tenant": tenant}})
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert {e["tenant"] for e in events if e["phase"] == "run_start"} == {"acme"}
    assert metrics(path, by="tenant").to_document()["groups"]["acme"]["runs"] == 3
