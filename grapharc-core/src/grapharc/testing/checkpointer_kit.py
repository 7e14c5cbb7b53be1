"""A conformance kit for ``CheckpointerProvider`` implementations, ours or a third party's.

Subclass ``CheckpointerConformance`` in a class pytest collects and override
``make_provider(tmp_path)``. The kit runs LangGraph's own conformance suite
(``langgraph-checkpoint-conformance``'s ``validate()``, which must be installed), extended
capabilities included, against the provider's async saver, its sync saver (each call in a
worker thread, since the suite speaks only the async API), and GraphARC's ``FencedSaver``
wrapping each; with ``session_location``, also against the savers the graphs of a
``SessionManager`` there hold, which must offer every capability the provider's do. Then it
adds what that suite lacks: a fenced saver whose lease was lost writes nothing (no checkpoint,
no deletion, prune or copy), the sync and async savers share one store, retention's
deletion removes a thread's checkpoints and writes and nothing else, and (where the saver offers
it) ``discard_writes`` drops the tasks' writes a rollback names but their interrupts. Set ``durable = True``
to prove checkpoints survive ``close()``.

    class TestMyCheckpoints(CheckpointerConformance):
        durable = True

        def make_provider(self, tmp_path):
            return open_store(f"mine:{tmp_path}", kind="checkpoints")

        def session_location(self, tmp_path):
            return f"mine:{tmp_path}"
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph._internal._constants import NULL_TASK_ID
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)
from langgraph.checkpoint.serde.types import INTERRUPT, RESUME

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.runtime.wrapped_saver import DiscardsWrites, offers
from grapharc.session.contracts import CheckpointerProvider
from grapharc.session.errors import LeaseLostError
from grapharc.session.fencing import FencedSaver
from grapharc.session.manager import SessionManager
from grapharc.session.retention import delete_threads
from grapharc.testing.fences import engaged_fence, lost_fence, writes_to_a_lost_thread
from grapharc.testing.langgraph_suite import (
    async_capabilities,
    check_langgraph_suite,
    fenced,
    held,
    run_langgraph_suite,
    same_capabilities,
    sync_capabilities,
    threaded,
)


class _Visits(GraphARCState):
    visits: int = 0


SESSION_GRAPH = "checkpointer-kit"
"""The graph a kit's session registers, so it compiles one over its checkpointers."""


def session_graph() -> GraphARC:
    """One node counting its visits: a graph for ``session_saver`` to compile."""
    graph = GraphARC(_Visits, name=SESSION_GRAPH)
    graph.add_node("visit", lambda state: {"visits": state.visits + 1}, writes={"visits"})
    graph.add_edge(START, "visit")
    graph.add_edge("visit", END)
    return graph


def session_saver(manager: SessionManager,
                  saver: BaseCheckpointSaver[Any] | None = None) -> BaseCheckpointSaver[Any]:
    """The checkpointer the graph a session runs holds (fenced and spend-stamped as the manager
    compiles it) over ``saver``, by default the manager's sync one; ``SESSION_GRAPH`` registered."""
    return cast(BaseCheckpointSaver[Any], manager._compiled(SESSION_GRAPH, None, saver).checkpointer)


def first_checkpoint(saver: BaseCheckpointSaver[Any], thread_id: str, **metadata: Any) -> Any:
    """Put an empty checkpoint on ``thread_id`` (with ``metadata``); its stored config."""
    return saver.put(generate_config(thread_id), generate_checkpoint(), generate_metadata(**metadata), {})


def listed(saver: BaseCheckpointSaver[Any], *thread_ids: str) -> dict[str, list[Any]]:
    """The stored configs of each thread's checkpoints, newest first."""
    return {thread_id: [t.config for t in saver.list(generate_config(thread_id))] for thread_id in thread_ids}


def _lost_and_kept(saver: BaseCheckpointSaver[Any]) -> dict[str, list[Any]]:
    """Two checkpoints on each of the threads ``lost`` and ``kept`` (of runs ``run-lost``,
    ``run-kept``); what ``listed`` says of them."""
    for thread_id in ("lost", "kept"):
        stored = first_checkpoint(saver, thread_id, run_id=f"run-{thread_id}")
        saver.put(stored, generate_checkpoint(), generate_metadata(step=1, run_id=f"run-{thread_id}"), {})
    return listed(saver, "lost", "kept")


class CheckpointerConformance(ABC):
    """The ``CheckpointerProvider`` contract as pytest tests; subclass it and implement ``make_provider``."""

    durable: bool = False

    @abstractmethod
    def make_provider(self, tmp_path: Path) -> CheckpointerProvider:
        """Return a new, empty provider of the implementation under test, located under tmp_path."""

    def reopen_provider(self, tmp_path: Path) -> CheckpointerProvider:
        """Return the provider ``make_provider(tmp_path)`` made, opened again after it was closed."""
        return self.make_provider(tmp_path)

    def session_location(self, tmp_path: Path) -> str | None:
        """A store URI at which a ``SessionManager`` opens this kind of provider (and a session store
        beside it), to run LangGraph's suite on the saver a session's graph holds; None skips that."""
        return None

    @pytest.fixture
    def session(self, tmp_path: Path) -> Iterator[SessionManager]:
        """A session manager at ``session_location`` with ``session_graph`` registered, closed afterwards."""
        location = self.session_location(tmp_path)
        if location is None:
            pytest.skip("the implementation under test names no session_location")
        manager = SessionManager(location)
        manager.register(session_graph())
        yield manager
        manager.close()

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[CheckpointerProvider]:
        """The provider under test, closed afterwards."""
        provider = self.make_provider(tmp_path)
        yield provider
        provider.close()

    # -- LangGraph's suite -----------------------------------------------------------

    def test_provider_satisfies_the_checkpointer_provider_protocol(
            self, provider: CheckpointerProvider) -> None:
        assert isinstance(provider, CheckpointerProvider)
        assert isinstance(provider.saver(), BaseCheckpointSaver)

    def test_the_async_saver_passes_langgraphs_conformance_suite(
            self, provider: CheckpointerProvider) -> None:
        run_langgraph_suite("async saver", provider.async_saver)

    def test_the_fenced_async_saver_passes_langgraphs_conformance_suite(
            self, provider: CheckpointerProvider) -> None:
        leases, checked = engaged_fence()
        run_langgraph_suite("fenced async saver", fenced(provider.async_saver, leases))
        assert checked, "the suite's writes never reached the fence"

    def test_the_sync_saver_passes_langgraphs_conformance_suite(self, provider: CheckpointerProvider) -> None:
        saver = provider.saver()
        run_langgraph_suite("sync saver", threaded(saver), sync_capabilities(saver))

    def test_the_fenced_sync_saver_passes_langgraphs_conformance_suite(
            self, provider: CheckpointerProvider) -> None:
        leases, checked = engaged_fence()
        saver = FencedSaver(provider.saver(), leases)
        run_langgraph_suite("fenced sync saver", threaded(saver), sync_capabilities(saver))
        assert checked, "the suite's writes never reached the fence"

    def test_a_session_graphs_sync_saver_offers_the_providers_capabilities_and_passes_the_suite(
            self, session: SessionManager) -> None:
        saver = session_saver(session)
        same_capabilities("sync", sync_capabilities(saver), sync_capabilities(session.checkpointer))
        run_langgraph_suite("session graph's sync saver", threaded(saver), sync_capabilities(saver))

    def test_a_session_graphs_async_saver_offers_the_providers_capabilities_and_passes_the_suite(
            self, session: SessionManager) -> None:
        async def scenario() -> None:
            try:
                provided = await session._async_checkpointer()
                saver = session_saver(session, provided)
                same_capabilities("async", async_capabilities(saver), async_capabilities(provided))
                await check_langgraph_suite("session graph's async saver", held(saver))
            finally:
                await session.aclose()

        asyncio.run(scenario())

    # -- what the suite lacks --------------------------------------------------------

    def test_a_fenced_saver_that_lost_its_lease_writes_nothing(self, provider: CheckpointerProvider) -> None:
        saver = provider.saver()
        stored = first_checkpoint(saver, "lost")
        stale = FencedSaver(saver, lost_fence("lost"))
        with pytest.raises(LeaseLostError, match="stale-runner"):
            stale.put(stored, generate_checkpoint(), generate_metadata(step=1), {})
        with pytest.raises(LeaseLostError, match="stale-runner"):
            stale.put_writes(stored, [("channel", "late")], "task-1")
        assert [t.config for t in saver.list(generate_config("lost"))] == [stored]
        kept = saver.get_tuple(stored)
        assert kept is not None and kept.pending_writes == []
        assert stale.put(generate_config("unleased"), generate_checkpoint(), generate_metadata(), {})

    def test_a_fenced_async_saver_that_lost_its_lease_writes_nothing(
            self, provider: CheckpointerProvider) -> None:
        stored = first_checkpoint(provider.saver(), "lost")

        async def scenario() -> None:
            async with provider.async_saver() as saver:
                stale = FencedSaver(saver, lost_fence("lost"))
                with pytest.raises(LeaseLostError, match="stale-runner"):
                    await stale.aput(stored, generate_checkpoint(), generate_metadata(step=1), {})
                with pytest.raises(LeaseLostError, match="stale-runner"):
                    await stale.aput_writes(stored, [("channel", "late")], "task-1")

        asyncio.run(scenario())
        saver = provider.saver()
        assert [t.config for t in saver.list(generate_config("lost"))] == [stored]
        kept = saver.get_tuple(stored)
        assert kept is not None and kept.pending_writes == []

    def test_a_fenced_saver_that_lost_its_lease_deletes_prunes_and_copies_nothing_of_the_thread(
            self, provider: CheckpointerProvider) -> None:
        saver = provider.saver()
        before = _lost_and_kept(saver)
        stale = FencedSaver(saver, lost_fence("lost"))
        writes = writes_to_a_lost_thread(stale)
        for method, write in writes.items():
            with pytest.raises(LeaseLostError, match="stale-runner"):
                write()
            assert listed(saver, "lost", "kept") == before, f"{method} changed a thread"
        stale.delete_thread("kept")
        assert listed(saver, "lost", "kept") == {**before, "kept": []}

    def test_a_fenced_async_saver_that_lost_its_lease_deletes_prunes_and_copies_nothing_of_the_thread(
            self, provider: CheckpointerProvider) -> None:
        before = _lost_and_kept(provider.saver())

        async def scenario() -> list[str]:
            async with provider.async_saver() as saver:
                stale = FencedSaver(saver, lost_fence("lost"))
                writes = writes_to_a_lost_thread(stale, prefix="a")
                for write in writes.values():
                    with pytest.raises(LeaseLostError, match="stale-runner"):
                        await write()
                return list(writes)

        assert "adelete_thread" in asyncio.run(scenario())
        assert listed(provider.saver(), "lost", "kept") == before

    def test_discarding_tasks_writes_keeps_their_interrupts_and_the_other_tasks_writes(
            self, provider: CheckpointerProvider) -> None:
        saver = provider.saver()
        if not offers(saver, "discard_writes"):
            pytest.skip("the saver under test has no discard_writes: a rolled-back resume keeps its answers")
        stored = first_checkpoint(saver, "rewound")
        saver.put_writes(stored, [(INTERRUPT, "asked")], "task-asked")
        saver.put_writes(stored, [("answer", "yes")], "task-asked")
        saver.put_writes(stored, [("done", True)], "task-done")
        saver.put_writes(stored, [(RESUME, "yes")], NULL_TASK_ID)
        elsewhere = first_checkpoint(saver, "elsewhere")
        saver.put_writes(elsewhere, [("answer", "kept")], "task-asked")
        cast(DiscardsWrites, saver).discard_writes(stored, ["task-asked", NULL_TASK_ID])
        rewound, untouched = saver.get_tuple(stored), saver.get_tuple(elsewhere)
        assert rewound is not None and untouched is not None and rewound.pending_writes is not None
        assert sorted(rewound.pending_writes) == [("task-asked", INTERRUPT, "asked"),
                                                  ("task-done", "done", True)]
        assert untouched.pending_writes == [("task-asked", "answer", "kept")]

    def test_the_sync_and_async_savers_share_one_store(self, provider: CheckpointerProvider) -> None:
        sync = provider.saver()
        first = first_checkpoint(sync, "shared")

        async def scenario() -> tuple[CheckpointTuple | None, Any]:
            async with provider.async_saver() as saver:
                seen = await saver.aget_tuple(generate_config("shared"))
                second = await saver.aput(first, generate_checkpoint(), generate_metadata(step=1), {})
                await saver.aput_writes(second, [("channel", "value")], "task-1")
                return seen, second

        seen, second = asyncio.run(scenario())
        assert seen is not None and seen.config == first
        latest = sync.get_tuple(generate_config("shared"))
        assert latest is not None and latest.config == second
        assert latest.pending_writes == [("task-1", "channel", "value")]

    def test_deleting_finished_threads_removes_their_checkpoints_and_writes_only(
            self, provider: CheckpointerProvider) -> None:
        saver = provider.saver()
        for thread_id in ("gone-1", "gone-2", "kept"):
            stored = first_checkpoint(saver, thread_id)
            saver.put_writes(stored, [("channel", thread_id)], f"task-{thread_id}")
        delete_threads(saver, ["gone-1", "gone-2"])
        provider.compact()
        for gone in ("gone-1", "gone-2"):
            assert saver.get_tuple(generate_config(gone)) is None
            assert list(saver.list(generate_config(gone))) == []
        kept = saver.get_tuple(generate_config("kept"))
        assert kept is not None and kept.pending_writes == [("task-kept", "channel", "kept")]

    def test_footprint_names_where_the_bytes_are(self, provider: CheckpointerProvider) -> None:
        first_checkpoint(provider.saver(), "weighed")
        sizes = provider.footprint()
        assert all(isinstance(where, str) and isinstance(size, int) and size >= 0
                   for where, size in sizes.items())

    def test_a_closed_provider_closes_again_quietly(self, tmp_path: Path) -> None:
        provider = self.make_provider(tmp_path)
        first_checkpoint(provider.saver(), "t")
        provider.close()
        provider.close()

    def test_checkpoints_survive_close_and_reopen(self, tmp_path: Path) -> None:
        if not self.durable:
            pytest.skip("provider under test declares durable = False")
        provider = self.make_provider(tmp_path)
        stored = first_checkpoint(provider.saver(), "kept")
        provider.saver().put_writes(stored, [("channel", "東京")], "task-1")
        provider.close()
        reopened = self.reopen_provider(tmp_path)
        try:
            found = reopened.saver().get_tuple(generate_config("kept"))
            assert found is not None and found.config == stored
            assert found.pending_writes == [("task-1", "channel", "東京")]
        finally:
            reopened.close()
