"""Use a custom plugin's node kind in a graph: registered in-process, admitted, then run.

``plugin_host(in_process_source(...))`` from ``grapharc.testing`` makes ``shout_plugin`` a
registered plugin without installing it. The installed kinds' surface (what ``grapharc run
--registry plugins`` uses) then has the ``shout`` kind and a state with its ``shouted``
field; a graph naming ``shout`` goes through admission and is built from the plugin's factory.

Run it from the repository root after ``make install``:

    .venv/bin/python examples/custom_plugin/use_plugin.py
"""

from __future__ import annotations

import shout_plugin

from grapharc.harness.permissions import Decision
from grapharc.planner import AdmissionChecker, EdgePolicy, EdgeRule, Materializer, Subgraph
from grapharc.planner.surface import PLUGINS, load_surface
from grapharc.runtime.budget import Budget
from grapharc.testing import in_process_source, plugin_host

GRAPH = {"nodes": [{"name": "shout"}], "edges": [{"source": "__start__", "target": "shout"}]}


def main() -> None:
    """Register the plugin, show where its kind came from, admit a graph using it and run it."""
    with plugin_host(in_process_source(shout_plugin, name="shout-plugin", version="0.1.0"),
                     installed=False) as host:
        for kind, entry in sorted(host.registry("node_kinds").items()):
            print(f"kind {kind!r} registered by {entry.distribution}")
        surface = load_surface(PLUGINS)
        proposal = Subgraph.model_validate(GRAPH)
        verdict = AdmissionChecker(registry=surface.registry,
                                   edge_policy=EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW),)),
                                   ).check(proposal)
        print("admission:", verdict.status.value)
        compiled = Materializer(registry=surface.registry, state_schema=surface.state_schema,
                                ).materialize(verdict, proposal, budget=Budget(max_iterations=3))
        print("state:", compiled.invoke({"goal": "hello plugins"}))


if __name__ == "__main__":
    main()
