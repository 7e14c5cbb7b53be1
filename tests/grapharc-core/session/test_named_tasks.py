"""A node scan names a checkpoint's tasks from its saved tuple as LangGraph's prepared snapshot does.

Over every top checkpoint of varied graphs on LangGraph's SQLite saver (core's extends it): chain,
fan-outs, ``Send``, subgraph, interrupt, failure, resumed and forked threads, writes lost. The same
task ids, names, paths, errors, interrupts and results, and the same completions and watermark for
a scan from every step.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from named_shapes import assert_named_as_prepared, run_shapes


def test_named_tasks_are_the_prepared_snapshots_tasks_on_sqlite(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    try:
        def forget_writes(thread_id: str, checkpoint_id: str) -> None:
            with connection:
                connection.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id = ?",
                                   (thread_id, checkpoint_id))

        seen = [task for graph, thread in run_shapes(SqliteSaver(connection), forget_writes)
                for task in assert_named_as_prepared(graph, thread)]
    finally:
        connection.close()
    names = {name for _id, name, *_ in seen}
    assert {"a", "work", "sub", "ask", "flaky", "__start__"} <= names
    assert any(error != "None" for *_, error, _interrupts, _result in seen)
    assert any(interrupts for *_, interrupts, _result in seen)
    assert any(result is None for *_, result in seen) and any(result for *_, result in seen)
