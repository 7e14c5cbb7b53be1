"""``--by tenant`` groups a tenant's runs however a trace spells it: one written before tenants
were kept case-folded may name one tenant ``ACME`` and ``acme``."""

from __future__ import annotations

from grapharc.observe.cost import cost
from grapharc.observe.metrics import metrics


def test_one_tenant_spelled_two_ways_in_an_older_trace_is_one_group(builder):
    for run, tenant in (("r1", "ACME"), ("r2", "acme"), ("r3", "globex")):
        builder.run_start(run, thread="t", tenant=tenant).node(run, "load", 1, thread="t", tokens=3)
        builder.run_end(run, thread="t")
    path = builder.write()
    groups = metrics(path, by="tenant").to_document()["groups"]
    assert {name: group["runs"] for name, group in groups.items()} == {"acme": 2, "globex": 1}
    assert set(cost(path, by="tenant").to_document()["groups"]) == {"acme", "globex"}
