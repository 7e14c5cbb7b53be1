"""The compiled graph: the only governed way in to a LangGraph graph built by GraphARC.

Every entry point (invoke, stream, ainvoke, astream, astream_events, resume) opens a
run: a run id, the thread's next attempt and step shift (``grapharc.runtime.resume``),
a BudgetMeter, a ``run_start`` trace event, and the run context the node wrappers
require. It closes with a ``run_end`` event carrying the status and the stop reason.
``last_run`` tells the caller about the run it just made (``grapharc.runtime.run_info``).
``.inner`` is the LangGraph compiled graph, for inspection: its nodes refuse to run
without the context these entry points set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from contextvars import copy_context
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal
from uuid import uuid4

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot
from pydantic import BaseModel

from grapharc.runtime.budget import Budget
from grapharc.runtime.context import CURRENT_RUN, RunContext
from grapharc.runtime.errors import (
    AsyncNodeError,
    MissingRunContextError,
    NoCheckpointerError,
    RunInputError,
    UnknownNodeError,
    UnsupportedStreamError,
    WritePermissionError,
)
from grapharc.runtime.lifecycle import RunLifecycle
from grapharc.runtime.node import DeclaredNode
from grapharc.runtime.pump import ContextPump
from grapharc.runtime.resume import (
    MARKER_CHANNEL,
    end_marker,
    history_of,
    thread_config,
)
from grapharc.runtime.run_info import RunInfo, latest
from grapharc.runtime.state import StateContract
from grapharc.runtime.thread_spend import NOTHING, carried
from grapharc.runtime.trace_buffer import RunTraceWriter
from grapharc.trace.writer import TraceWriter

_STREAM_VERSIONS: tuple[Literal["v1", "v2"], ...] = ("v1", "v2")


def _event_stream_version(version: str) -> Literal["v1", "v2"]:
    """``version`` as a version LangChain's event stream takes; v3 and anything else refused."""
    for known in _STREAM_VERSIONS:
        if version == known:
            return known
    raise UnsupportedStreamError(
        f"astream_events(version={version!r}) is not supported; use 'v1' or 'v2'",
        hint="LangGraph returns a stream object for v3 rather than an async iterator",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectedCommand(Command[str]):  # type: ignore[misc]  # Command is frozen; mypy cannot see it
    """A ``Command`` whose ``goto`` and ``update`` ``grapharc.runtime.directed.directed`` checked:
    the one kind with either that a compiled GraphARC takes as run input."""


class CompiledGraphARC:
    """A compiled GraphARC graph: governed entry points over ``.inner`` (LangGraph's graph)."""

    def __init__(
        self,
        inner: CompiledStateGraph[Any, Any, Any, Any],
        *,
        name: str,
        contract: StateContract,
        budget: Budget,
        trace: str | PathLike[str] | TraceWriter | None,
        nodes: Mapping[str, DeclaredNode],
        async_parts: frozenset[str],
        checkpointer: Any,
        edges: list[list[str]] | None = None,
        thread_metered: bool = False,
    ) -> None:
        self.inner = inner
        self.name = name
        self.contract = contract
        self.budget = budget
        self.nodes = dict(nodes)
        self.async_parts = async_parts
        self.checkpointer = checkpointer
        self.trace: TraceWriter | None = (
            trace if trace is None or isinstance(trace, TraceWriter) else RunTraceWriter(trace)
        )
        self._owns_trace = self.trace is not trace
        self.writable = frozenset().union(*(spec.writes for spec in self.nodes.values()))
        self._runs = RunLifecycle(self, name=name, budget=budget, trace=self.trace,
                                  checkpointer=checkpointer, inner=inner, edges=edges or [],
                                  thread_metered=thread_metered)

    @property
    def last_run(self) -> RunInfo | None:
        """The latest run this graph made in the caller's thread or task: ``running`` while it
        is under way, then how it ended, with its ids, steps, spend and stop reason."""
        return latest(self)

    @property
    def has_async(self) -> bool:
        """True if any node or router is ``async def`` (sync entry points then refuse)."""
        return bool(self.async_parts)

    # -- run lifecycle -------------------------------------------------------------

    def _refuse_async(self) -> None:
        if self.async_parts:
            raise AsyncNodeError(self.name, self.async_parts)

    def _prepare_input(self, value: Any) -> Any:
        """Check run input: state values by name and type, or a bare resume Command."""
        if value is None:
            return None
        if isinstance(value, Command):
            if isinstance(value, DirectedCommand):  # its goto and update were checked (``directed``)
                return value
            if value.update is not None or value.goto or value.graph is not None:
                raise RunInputError(
                    f"a Command passed as run input may carry only resume=; got {value!r}",
                    hint="use compiled.resume(value, config) to answer an interrupt, "
                    "update_state(config, values, as_node=...) to edit state, and "
                    "grapharc.runtime.directed.directed for a checked goto= or update=",
                )
            return value
        if isinstance(value, self.contract.schema):
            return {name: getattr(value, name) for name in self.contract.fields}
        if isinstance(value, Mapping):
            return self.contract.check_values("run input", value)
        if isinstance(value, BaseModel):
            raise RunInputError(
                f"run input is a {type(value).__name__}, not the graph's state "
                f"{self.contract.schema.__name__}"
            )
        raise RunInputError(f"run input must be a dict of state values, got {type(value).__name__}")

    # -- sync entry points ---------------------------------------------------------

    def invoke(self, input: Any = None, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the graph to completion (or to an interrupt); kwargs such as
        ``durability=`` go to LangGraph."""
        self._refuse_async()
        payload = self._prepare_input(input)
        opened = self._runs.open(config, kwargs.get("durability"))
        token = CURRENT_RUN.set(opened.run)
        try:
            out = self.inner.invoke(payload, opened.config, **kwargs)
        except BaseException as exc:
            self._runs.finish(opened, exc)
            raise
        finally:
            CURRENT_RUN.reset(token)
        self._runs.finish(opened, None)
        return out

    def stream(self, input: Any = None, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        """LangGraph's ``stream`` (any stream_mode, subgraphs=...) under the run's discipline."""
        self._refuse_async()
        return self._stream(self._prepare_input(input), config, kwargs)

    def _stream(self, payload: Any, config: RunnableConfig | None, kwargs: dict[str, Any]) -> Iterator[Any]:
        opened = self._runs.open(config, kwargs.get("durability"))
        context = copy_context()
        context.run(CURRENT_RUN.set, opened.run)
        chunks = context.run(lambda: self.inner.stream(payload, opened.config, **kwargs))
        try:
            while True:
                try:
                    chunk = context.run(next, chunks)
                except StopIteration:
                    break
                yield chunk
        except GeneratorExit as stop:
            if isinstance(chunks, Generator):  # Pregel.stream is a generator; its stub says Iterator
                context.run(chunks.close)
            self._runs.finish(opened, stop)
            raise
        except BaseException as exc:
            self._runs.finish(opened, exc)
            raise
        self._runs.finish(opened, None)

    def resume(self, value: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Answer an ``interrupt()``: the value goes in as ``Command(resume=value)``, nothing else."""
        return self.invoke(Command(resume=value), config, **kwargs)

    # -- async entry points --------------------------------------------------------

    async def ainvoke(self, input: Any = None, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async ``invoke``; ``async def`` nodes run here."""
        payload = self._prepare_input(input)
        opened = await self._runs.aopen(config, kwargs.get("durability"))
        token = CURRENT_RUN.set(opened.run)
        try:
            out = await self.inner.ainvoke(payload, opened.config, **kwargs)
        except BaseException as exc:
            await self._runs.afinish(opened, exc)
            raise
        finally:
            CURRENT_RUN.reset(token)
        await self._runs.afinish(opened, None)
        return out

    async def aresume(self, value: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async ``resume``."""
        return await self.ainvoke(Command(resume=value), config, **kwargs)

    def astream(
        self, input: Any = None, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async ``stream``."""
        payload = self._prepare_input(input)
        return self._apump(config, lambda cfg: self.inner.astream(payload, cfg, **kwargs),
                           kwargs.get("durability"))

    def astream_events(
        self,
        input: Any = None,
        config: RunnableConfig | None = None,
        *,
        version: str = "v2",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """LangChain's event stream, v1 or v2; v3 is refused (it is a stream object, not an
        async iterator)."""
        known = _event_stream_version(version)
        payload = self._prepare_input(input)
        return self._apump(
            config,
            lambda cfg: self.inner.astream_events(payload, cfg, version=known, **kwargs),
            kwargs.get("durability"),
        )

    async def _apump(
        self, config: RunnableConfig | None, make: Callable[[RunnableConfig], AsyncIterator[Any]],
        durability: str | None,
    ) -> AsyncIterator[Any]:
        """Run LangGraph's async iterator under the run (see ``grapharc.runtime.pump``)."""
        opened = await self._runs.aopen(config, durability)
        context = copy_context()
        context.run(CURRENT_RUN.set, opened.run)
        chunks = ContextPump(make(opened.config), context)
        try:
            async for chunk in chunks:
                yield chunk
        except BaseException as exc:
            await chunks.aclose()
            await self._runs.afinish(opened, exc)
            raise
        await self._runs.afinish(opened, None)

    # -- nested use as a subgraph --------------------------------------------------

    def run_nested(self, values: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Run as a node of a parent graph, inside the parent's run (same meter and trace)."""
        token = CURRENT_RUN.set(self._child_run())
        try:
            return self.inner.invoke(values, config)
        finally:
            CURRENT_RUN.reset(token)

    def _child_run(self) -> RunContext:
        """The hosting node's run, one level down (a nested run outside any run is refused)."""
        run = CURRENT_RUN.get()
        if run is None:
            raise MissingRunContextError(self.name)
        return run.child()

    async def arun_nested(self, values: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        """Async ``run_nested``."""
        token = CURRENT_RUN.set(self._child_run())
        try:
            return await self.inner.ainvoke(values, config)
        finally:
            CURRENT_RUN.reset(token)

    # -- state inspection and checked edits ----------------------------------------

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """LangGraph's StateSnapshot of the thread (inspection runs no node)."""
        return self.inner.get_state(config, subgraphs=subgraphs)

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """Async ``get_state``."""
        return await self.inner.aget_state(config, subgraphs=subgraphs)

    def get_state_history(self, config: RunnableConfig, **kwargs: Any) -> Iterator[StateSnapshot]:
        """LangGraph's checkpoint history of the thread, newest first."""
        return self.inner.get_state_history(config, **kwargs)

    def aget_state_history(self, config: RunnableConfig, **kwargs: Any) -> AsyncIterator[StateSnapshot]:
        """Async ``get_state_history``."""
        return self.inner.aget_state_history(config, **kwargs)

    def checked_update(
        self, values: Mapping[str, Any] | None, as_node: str | None, current: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Unknown fields refused, types checked, and ``as_node``'s allowlist applied."""
        if values is None:
            return None
        if not isinstance(values, Mapping):
            raise RunInputError(f"update_state values must be a dict, got {type(values).__name__}")
        checked = self.contract.check_values("update_state", values)
        if as_node is None:
            return checked
        spec = self.nodes.get(as_node)
        if spec is None:
            raise UnknownNodeError("update_state(as_node=...)", as_node, self.nodes)
        for field in checked:
            if field not in spec.writes:
                raise WritePermissionError(as_node, field, spec.writes)
        model = self.contract.schema.model_construct(**current) if current else None
        return self.contract.check_writes(as_node, spec.writes, checked, model)

    def update_state(
        self, config: RunnableConfig, values: Mapping[str, Any] | None, as_node: str | None = None
    ) -> RunnableConfig:
        """A checked edit of the thread's state; the thread's attempt and steps carry on."""
        current = self.inner.get_state(config).values if as_node else {}
        checked = self.checked_update(values, as_node, current)
        saver = self._require_checkpointer()
        thread_id = str(config["configurable"]["thread_id"])
        before = saver.get_tuple(thread_config(thread_id))
        new_config = self.inner.update_state(config, checked, as_node=as_node)
        latest = saver.get_tuple(new_config)
        if latest is not None:
            saver.put_writes(latest.config, [_carried(before, latest)], f"grapharc:update:{uuid4()}")
        return new_config

    async def aupdate_state(
        self, config: RunnableConfig, values: Mapping[str, Any] | None, as_node: str | None = None
    ) -> RunnableConfig:
        """Async ``update_state``."""
        current = (await self.inner.aget_state(config)).values if as_node else {}
        checked = self.checked_update(values, as_node, current)
        saver = self._require_checkpointer()
        thread_id = str(config["configurable"]["thread_id"])
        before = await saver.aget_tuple(thread_config(thread_id))
        new_config = await self.inner.aupdate_state(config, checked, as_node=as_node)
        latest = await saver.aget_tuple(new_config)
        if latest is not None:
            await saver.aput_writes(latest.config, [_carried(before, latest)], f"grapharc:update:{uuid4()}")
        return new_config

    def _require_checkpointer(self) -> Any:
        if self.checkpointer is None:
            raise NoCheckpointerError(self.name)
        return self.checkpointer

    def get_graph(self, *args: Any, **kwargs: Any) -> Any:
        """LangGraph's drawable graph (inspection)."""
        return self.inner.get_graph(*args, **kwargs)

    def close(self) -> None:
        """Close the trace file if this graph opened it."""
        if self._owns_trace and self.trace is not None:
            self.trace.close()

    def __enter__(self) -> CompiledGraphARC:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<CompiledGraphARC {self.name!r} nodes={sorted(self.nodes)}>"


def _carried(before: Any, update: Any) -> tuple[str, dict[str, Any]]:
    """The marker that carries a thread's attempt, step floor and spend from the checkpoint
    ``before`` an edit over the ``update`` checkpoint it made."""
    attempt, high = history_of(before)
    step = int(update.metadata.get("step", 0))
    spent = carried(before, MARKER_CHANNEL)
    return MARKER_CHANNEL, end_marker(attempt, high - step, high, spent if spent != NOTHING else None)
