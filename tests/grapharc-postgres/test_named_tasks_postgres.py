"""A node scan names a checkpoint's tasks from its saved tuple on PostgreSQL as LangGraph's prepared
snapshot does, over the same varied graphs as on SQLite (``named_shapes``), and an async scan
through the async saver (a trip per page) reads what the sync one does."""

from __future__ import annotations

import asyncio

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from named_shapes import assert_async_scans_agree, assert_named_as_prepared, run_shapes
from psycopg import AsyncConnection, Connection
from psycopg.rows import dict_row


def test_named_tasks_are_the_prepared_snapshots_tasks_on_postgres(postgres_uri: str) -> None:
    with Connection.connect(postgres_uri, autocommit=True, prepare_threshold=0,
                            row_factory=dict_row) as connection:
        saver = PostgresSaver(connection)
        saver.setup()

        def forget_writes(thread_id: str, checkpoint_id: str) -> None:
            connection.execute("DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_id = %s",
                               (thread_id, checkpoint_id))

        seen, ran = [], []
        for graph, thread in run_shapes(saver, forget_writes):
            seen += assert_named_as_prepared(graph, thread)
            ran.append((graph, thread))
        assert {"a", "work", "sub", "ask", "flaky"} <= {name for _id, name, *_ in seen}

        async def scans_agree() -> int:
            async with await AsyncConnection.connect(postgres_uri, autocommit=True, prepare_threshold=0,
                                                     row_factory=dict_row) as aconnection:
                through = AsyncPostgresSaver(aconnection)
                return sum([await assert_async_scans_agree(graph, through, thread) for graph, thread in ran])

        assert asyncio.run(scans_agree()) > len(ran)  # the async scans, a trip per page, read the same
