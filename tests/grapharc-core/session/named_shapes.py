"""Varied LangGraph graphs run on a given checkpointer, and the check that a node scan's tasks named
from the saved tuples (``grapharc.session.named``) are those of LangGraph's prepared snapshots.

Shared by the SQLite and PostgreSQL tests. Shapes: a chain, a static fan-out, a ``Send`` fan-out,
a subgraph node, an ``interrupt`` resumed, a node failing then resumed, a fork from an older
checkpoint, a checkpoint whose writes were lost, leaving checkpoints with and without saved writes.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Send, interrupt

from grapharc.session.audit import completed_runs
from grapharc.session.history import Window, ascan_window, scan_window, snapshots, step_of
from grapharc.session.named import named


class Notes(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    item: str


def _note(name: str) -> Callable[[Notes], dict[str, Any]]:
    return lambda state: {"items": [name]}


def _chain(saver: BaseCheckpointSaver[Any]) -> Pregel:
    g = StateGraph(Notes)
    for name in ("a", "b", "c"):
        g.add_node(name, _note(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver)


def _static_fan_out(saver: BaseCheckpointSaver[Any]) -> Pregel:
    g = StateGraph(Notes)
    for name in ("a", "b", "c", "d"):
        g.add_node(name, _note(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", END)
    return g.compile(checkpointer=saver)


def _send_fan_out(saver: BaseCheckpointSaver[Any]) -> Pregel:
    g = StateGraph(Notes)
    g.add_node("plan", _note("plan"))
    g.add_node("work", lambda state: {"items": [f"work:{state['item']}"]})
    g.add_node("join", _note("join"))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", lambda state: [Send("work", {"item": x}) for x in "xyz"], ["work"])
    g.add_edge("work", "join")
    g.add_edge("join", END)
    return g.compile(checkpointer=saver)


def _with_subgraph(saver: BaseCheckpointSaver[Any]) -> Pregel:
    inner = StateGraph(Notes)
    inner.add_node("in1", _note("in1"))
    inner.add_node("in2", _note("in2"))
    inner.add_edge(START, "in1")
    inner.add_edge("in1", "in2")
    inner.add_edge("in2", END)
    g = StateGraph(Notes)
    g.add_node("before", _note("before"))
    g.add_node("sub", inner.compile())
    g.add_node("after", _note("after"))
    g.add_edge(START, "before")
    g.add_edge("before", "sub")
    g.add_edge("sub", "after")
    g.add_edge("after", END)
    return g.compile(checkpointer=saver)


def _asks(state: Notes) -> dict[str, Any]:
    answer = interrupt("approve?")
    return {"items": [f"answer:{answer}"]}


def _beside_a_sibling(saver: BaseCheckpointSaver[Any], name: str, node: Any) -> Pregel:
    """``a``, then ``node`` (as ``name``) and a sibling ``side`` in the same step, then ``z``: where
    ``node`` stops, the step's checkpoint holds the sibling's saved write beside it."""
    g = StateGraph(Notes)
    g.add_node("a", _note("a"))
    g.add_node(name, node)
    g.add_node("side", _note("side"))
    g.add_node("z", _note("z"))
    g.add_edge(START, "a")
    g.add_edge("a", name)
    g.add_edge("a", "side")
    g.add_edge([name, "side"], "z")
    g.add_edge("z", END)
    return g.compile(checkpointer=saver)


class Flaky:
    """A node that fails until ``mended`` is set."""

    mended = False

    def __call__(self, state: Notes) -> dict[str, Any]:
        if not self.mended:
            raise RuntimeError("not yet")
        return {"items": ["flaky"]}


def _thread(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def run_shapes(saver: BaseCheckpointSaver[Any],
               forget_writes: Callable[[str, str], None]) -> Iterator[tuple[Pregel, str]]:
    """Each shape run on ``saver`` (twice on its thread, resumed or forked where it stops): the
    graph and the thread it left checkpoints on. ``forget_writes(thread_id, checkpoint_id)`` drops
    a checkpoint's saved writes from the saver's tables (as a runner killed before saving them)."""
    for shape in (_chain, _static_fan_out, _send_fan_out, _with_subgraph):
        graph = shape(saver)
        for _ in range(2):
            graph.invoke({"items": []}, _thread(shape.__name__))
        yield graph, shape.__name__
    asking = _beside_a_sibling(saver, "ask", _asks)
    asking.invoke({"items": []}, _thread("asks"))
    yield asking, "asks"  # paused: the newest checkpoint holds the interrupt and a sibling's write
    asking.invoke(Command(resume="yes", update={"items": ["nudged"]}), _thread("asks"))  # a null write
    asking.invoke({"items": []}, _thread("asks"))
    yield asking, "asks"
    flaky = Flaky()
    failing = _beside_a_sibling(saver, "flaky", flaky)
    with pytest.raises(RuntimeError, match="not yet"):
        failing.invoke({"items": []}, _thread("fails"))
    yield failing, "fails"  # failed: the newest checkpoint holds the error and a sibling's write
    flaky.mended = True
    failing.invoke(None, _thread("fails"))
    yield failing, "fails"
    chain = _chain(saver)
    chain.invoke({"items": []}, _thread("forked"))
    older = list(chain.get_state_history(_thread("forked")))[2].config
    forked = chain.update_state(older, {"items": ["edited"]})
    chain.invoke(None, forked)
    yield chain, "forked"
    chain.invoke({"items": []}, _thread("lost"))
    middle = list(chain.get_state_history(_thread("lost")))[2].config["configurable"]["checkpoint_id"]
    forget_writes("lost", middle)
    yield chain, "lost"  # a settled scan records the tasks of a checkpoint carried on from anyway


class Compiled:
    """What the history readers use of a ``CompiledGraphARC``, over a plain LangGraph graph."""

    def __init__(self, pregel: Pregel) -> None:
        self.inner = pregel
        self.checkpointer = pregel.checkpointer

    def get_state_history(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        return self.inner.get_state_history(config, **kwargs)


def _view(tasks: Any) -> list[tuple[Any, ...]]:
    """What a scan or a stream reads of a checkpoint's tasks (errors by their text)."""
    return [(t.id, t.name, t.path, repr(t.error), t.interrupts, t.result) for t in tasks]


def assert_named_as_prepared(pregel: Pregel, thread_id: str) -> list[tuple[Any, ...]]:
    """Check every top checkpoint of the thread: its named tasks are its snapshot's, and a scan from
    each step (settled or not) finds the same completions and watermark either way; the tasks seen."""
    saver = pregel.checkpointer
    assert isinstance(saver, BaseCheckpointSaver)
    thread = _thread(thread_id)
    saved = list(saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}))
    prepared = list(pregel.get_state_history(thread))
    assert [t.config["configurable"]["checkpoint_id"] for t in saved] == [
        s.config["configurable"]["checkpoint_id"] for s in prepared]
    seen: list[tuple[Any, ...]] = []
    for tuple_, snapshot in zip(saved, prepared, strict=True):
        assert _view(named(pregel, tuple_).tasks) == _view(snapshot.tasks)
        valued = named(pregel, saver.get_tuple(tuple_.config), values=True)  # fresh: its null writes apply
        assert (_view(valued.tasks), valued.values) == (_view(snapshot.tasks), snapshot.values)
        seen += _view(snapshot.tasks)
    graph = Compiled(pregel)
    for since in range(-1, step_of(prepared[0]) + 2):
        scanned = scan_window(graph, thread, since)  # type: ignore[arg-type]
        valued = scan_window(graph, thread, since, values=True)  # type: ignore[arg-type]
        window = list(snapshots(graph, thread, Window(since_step=since)))  # type: ignore[arg-type]
        assert [n.values for n in valued] == [s.values for s in window], (thread_id, since)
        for settled in (False, True):
            assert (completed_runs(scanned, since, settled=settled)
                    == completed_runs(valued, since, settled=settled)
                    == completed_runs(window, since, settled=settled)), (thread_id, since, settled)
    return seen


async def assert_async_scans_agree(pregel: Pregel, async_saver: BaseCheckpointSaver[Any],
                                   thread_id: str) -> int:
    """Check that an async scan through ``async_saver`` (over the same tables as ``pregel``'s saver,
    a trip per page) reads what the sync scan reads, from each step; how many steps were compared."""
    sync, through = Compiled(pregel), Compiled(pregel)
    through.checkpointer = async_saver
    thread = _thread(thread_id)
    newest = step_of(next(iter(pregel.get_state_history(thread))))
    for since, values in itertools.product(range(-1, newest + 2), (False, True)):
        read = await ascan_window(through, thread, since, values=values)  # type: ignore[arg-type]
        assert [(_view(n.tasks), n.metadata, n.values) for n in read] == [
            (_view(n.tasks), n.metadata, n.values)
            for n in scan_window(sync, thread, since, values=values)]  # type: ignore[arg-type]
    return newest + 3
