"""What a paused thread's interrupt asks, read without its graph: the value LangGraph's state shows
for the same interrupt, by any manager over the same sessions."""

from __future__ import annotations

from pathlib import Path

from grapharc.examples.approval import GRAPH_NAME, register_credit_graph
from grapharc.session import SessionManager


def test_any_manager_reads_what_an_interrupt_asks_as_the_graphs_state_shows_it(tmp_path: Path) -> None:
    driver = SessionManager(tmp_path / "sessions")
    try:
        register_credit_graph(driver)
        asked = driver.start(GRAPH_NAME, {"application_id": "LN-7310"}, thread_id="credit").holds[0]
        snapshot = driver.graphs.compiled(GRAPH_NAME, driver.checkpointer).get_state(
            {"configurable": {"thread_id": "credit"}})
        shown = next(i.value for task in snapshot.tasks for i in task.interrupts if i.id == asked.hold_key)
    finally:
        driver.close()
    reader = SessionManager(tmp_path / "sessions")  # registers no graph
    try:
        assert reader.approval(asked.approval_id) == asked
        assert reader.interrupt_value("credit", asked.hold_key) == shown
        assert "Rosalind Achterberg" in shown
        assert reader.interrupt_value("credit", "no-such-interrupt") is None
        assert reader.interrupt_value("no-such-thread", asked.hold_key) is None
    finally:
        reader.close()
