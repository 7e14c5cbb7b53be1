"""--by tenant and --by label:KEY: events inherit their run's tenant and labels."""

from __future__ import annotations

import pytest

from grapharc.observe.cost import cost
from grapharc.observe.errors import GroupingError
from grapharc.observe.metrics import metrics


def tenant_trace(builder):
    builder.run_start("a", tenant="acme", labels={"team": "sre"}).node("a", "x", 1, tokens=10)
    builder.node("a", "y", 2, tokens=1, labels={"team": "data"})
    builder.run_start("b", tenant="globex", labels={"team": "sre"}).node("b", "x", 1, tokens=20)
    builder.add("model_call", "b", node=None, tokens=5, cost_usd=0.1)
    builder.run_start("c", tenant="acme").node("c", "x", 1, tokens=100)
    builder.run_start("d").node("d", "x", 1, tokens=1000)
    return builder.write()


def test_metrics_group_by_tenant_across_runs(builder):
    groups = metrics(tenant_trace(builder), by="tenant").to_document()["groups"]
    assert {key: (g["runs"], g["node_executions"], g["tokens"]["total"]) for key, g in groups.items()} == \
        {"acme": (2, 3, 111), "globex": (1, 1, 25), "(none)": (1, 1, 1000)}


def test_cost_groups_by_a_label_and_an_event_may_carry_its_own(builder):
    groups = cost(tenant_trace(builder), by="label:team").to_document()["groups"]
    assert {key: line["tokens"] for key, line in groups.items()} == \
        {"sre": 35, "data": 1, "(none)": 1100}
    assert groups["sre"]["recorded_cost_usd"] == pytest.approx(0.1)


def test_a_named_run_is_grouped_on_its_own_events_only(builder):
    groups = cost(tenant_trace(builder), "a", by="label:team").to_document()["groups"]
    assert {key: line["tokens"] for key, line in groups.items()} == {"sre": 10, "data": 1}


def test_tenant_and_labels_appear_on_a_runs_metrics(builder):
    result = metrics(tenant_trace(builder), "a").to_document()
    assert result["tenant"] == "acme" and result["labels"] == {"team": "sre"}


@pytest.mark.parametrize("spec", ["team", "label:", "labels:team", "tenants"])
def test_an_unknown_grouping_is_refused_with_the_forms_that_work(builder, spec):
    with pytest.raises(GroupingError, match="--by tenant or --by label:KEY"):
        metrics(tenant_trace(builder), by=spec)
