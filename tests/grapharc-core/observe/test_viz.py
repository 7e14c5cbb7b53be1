"""viz: the executed path as Mermaid, with counts on repeated edges and failures marked."""

from __future__ import annotations

import pytest

from grapharc.observe.errors import UnknownRunError
from grapharc.observe.viz import viz


def edges(result):
    return {(e["from"], e["to"]): e["count"] for e in result.to_document()["edges"]}


def test_a_chain_is_drawn_from_start_to_end(builder):
    builder.run_start("r").node("r", "a", 1).node("r", "b", 2).run_end("r")
    result = viz(builder.write(), "r")
    assert edges(result) == {("__start__", "a"): 1, ("a", "b"): 1, ("b", "__end__"): 1}
    assert result.mermaid() == (
        "flowchart TD\n"
        "    n0((START))\n"
        '    n1["a"]\n'
        '    n2["b"]\n'
        "    n3((END))\n"
        "    n0 --> n1\n"
        "    n1 --> n2\n"
        "    n2 --> n3\n"
    )


def test_a_loop_carries_counts_on_its_repeated_edges(builder):
    builder.run_start("r")
    step = 0
    for _ in range(3):
        builder.node("r", "draft", step := step + 1).node("r", "review", step := step + 1)
    builder.node("r", "publish", step + 1).run_end("r")
    result = viz(builder.write(), "r")
    assert edges(result) == {("__start__", "draft"): 1, ("draft", "review"): 3, ("review", "draft"): 2,
                             ("review", "publish"): 1, ("publish", "__end__"): 1}
    text = result.mermaid()
    assert '["draft ×3"]' in text and "-->|3|" in text and "-->|2|" in text


def test_fan_out_and_fan_in_are_drawn_through_the_superstep(builder):
    builder.run_start("r").node("r", "split", 1)
    for _ in range(3):
        builder.start("r", "worker", 2)
    for _ in range(3):
        builder.end("r", "worker", 2)
    builder.node("r", "join", 3).run_end("r")
    assert edges(viz(builder.write(), "r")) == {("__start__", "split"): 1, ("split", "worker"): 3,
                                                ("worker", "join"): 3, ("join", "__end__"): 1}


def test_a_failed_node_is_styled_and_the_run_does_not_reach_end(builder):
    builder.run_start("r").node("r", "a", 1).start("r", "b", 2).error("r", "b", 2)
    builder.run_end("r", status="error", stop_reason="ValueError")
    result = viz(builder.write(), "r")
    assert ("b", "__end__") not in edges(result)
    assert "class n2 failed" in result.mermaid()
    assert [n["failed"] for n in result.to_document()["nodes"]] == [False, True]


def test_a_run_still_going_has_no_end_and_admission_events_draw_nothing(builder):
    builder.run_start("r").node("r", "a", 1)
    builder.add("admission", "r", action="decision", node="gate", step=1)
    path = builder.write()
    result = viz(path, "r")
    assert edges(result) == {("__start__", "a"): 1}


def test_subgraph_nodes_are_drawn_in_their_own_lane(builder):
    builder.run_start("r", graph="outer").start("r", "host", 1, graph="outer")
    builder.node("r", "inner_a", 1, graph="inner").node("r", "inner_b", 2, graph="inner")
    builder.end("r", "host", 1, graph="outer").run_end("r", graph="outer")
    result = viz(builder.write(), "r")
    lanes = {(e["graph"], e["from"], e["to"]) for e in result.to_document()["edges"]}
    assert ("inner", "inner_a", "inner_b") in lanes and ("outer", "host", "__end__") in lanes
    assert '    subgraph g1["inner"]' in result.mermaid()


def test_node_names_are_escaped_for_mermaid(builder):
    builder.run_start("r").node("r", 'say "hi"', 1).run_end("r")
    assert '["say #quot;hi#quot;"]' in viz(builder.write(), "r").mermaid()


def test_an_unknown_run_is_reported(builder):
    with pytest.raises(UnknownRunError):
        viz(builder.run_start("r").write(), "x")
