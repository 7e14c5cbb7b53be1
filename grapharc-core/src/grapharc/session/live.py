"""A turn's live chunks: what LangGraph streams as a graph runs, beside what the audit trail records.

A caller (a server's worker) that wants more than the trail's node updates hands a turn a
``LiveSink``: the turn streams the graph in the sink's LangGraph modes besides ``updates``
(``messages``, ``custom``, ``debug``, ``tasks``, ``checkpoints``; with ``subgraphs``, also the
``values`` and ``updates`` of subgraphs), and with ``CHAT_EVENTS`` among them it runs the graph
with ``ChatModelEvents``, which reports each node's start and each chat model's start, tokens and
end as LangChain's event stream (``astream_events`` v2) names them. Every chunk but the top
graph's updates (which the trail records) goes to ``put`` with its namespace; ``flush`` is
awaited before a node's completion is recorded, so what a node streamed is kept before the trail
says it ended.

The sink only watches: the trail and the trace record the same as without it. One that raises is
logged and dropped for the rest of the turn (``GuardedSink``), never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.tracers._streaming import _StreamingCallbackHandler

CHAT_EVENTS = "events"
"""The sink mode of the chat-model events (not a LangGraph stream mode: ``ChatModelEvents``)."""
TRAIL_MODE = "updates"
"""The mode every turn streams: the top graph's updates, which the audit trail records."""
NS_SEP = "|"

_log = logging.getLogger(__name__)


class LiveSink(Protocol):
    """Where a turn's live chunks go."""

    modes: frozenset[str]
    """The LangGraph stream modes wanted besides ``updates``, and ``CHAT_EVENTS``."""
    subgraphs: bool
    """Whether subgraphs' chunks are wanted too (namespaced)."""

    def put(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        """Keep one chunk (on the event loop's thread, or a chat model's for ``CHAT_EVENTS``)."""
        ...

    async def flush(self) -> None:
        """Make every chunk put so far durable."""
        ...


class GuardedSink:
    """A turn's view of a ``LiveSink``: the stream modes and callbacks it asks for, and its calls,
    each until it raises once (then the turn goes on without it)."""

    def __init__(self, sink: LiveSink | None, thread_id: str) -> None:
        self.sink = sink
        self.thread_id = thread_id

    @property
    def stream_mode(self) -> str | list[str]:
        """The ``stream_mode`` a pass streams with: ``updates`` alone without a sink."""
        if self.sink is None:
            return TRAIL_MODE
        return [TRAIL_MODE, *sorted(self.sink.modes - {TRAIL_MODE, CHAT_EVENTS})]

    @property
    def subgraphs(self) -> bool:
        return self.sink is not None and self.sink.subgraphs

    def callbacks(self) -> list[BaseCallbackHandler]:
        """The callbacks a pass runs with: ``ChatModelEvents`` when the sink asks for them."""
        if self.sink is None or CHAT_EVENTS not in self.sink.modes:
            return []
        return [ChatModelEvents(self)]

    def split(self, part: Any) -> tuple[tuple[str, ...], str, Any]:
        """A streamed item as (namespace, mode, chunk), whichever ``stream_mode`` and ``subgraphs``."""
        if self.sink is None:
            return (), TRAIL_MODE, part
        if self.sink.subgraphs:
            namespace, mode, chunk = part
            return tuple(namespace), mode, chunk
        mode, chunk = part
        return (), mode, chunk

    def put(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        if self.sink is None:
            return
        try:
            self.sink.put(namespace, mode, chunk)
        except Exception:
            self._drop()

    async def flush(self) -> None:
        if self.sink is None:
            return
        try:
            await self.sink.flush()
        except Exception:
            self._drop()

    def _drop(self) -> None:
        _log.warning("thread %s: the live sink raised; it is no longer called this turn", self.thread_id,
                     exc_info=True)
        self.sink = None


def namespace_of(metadata: dict[str, Any] | None) -> tuple[str, ...]:
    """The namespace of the graph a chat model was called in (its task's own segment dropped)."""
    checkpoint_ns = str((metadata or {}).get("langgraph_checkpoint_ns") or "")
    return tuple(checkpoint_ns.split(NS_SEP))[:-1] if checkpoint_ns else ()


T = TypeVar("T")


class ChatModelEvents(BaseCallbackHandler, _StreamingCallbackHandler[Any]):
    """Puts ``on_chat_model_start`` / ``on_chat_model_stream`` / ``on_chat_model_end`` events, and
    each node's ``on_chain_start`` (the trail renders its end), shaped as LangChain's event stream
    (v2) shapes them, to the sink as ``CHAT_EVENTS`` chunks (a subgraph's only when the sink wants
    subgraphs). A streaming handler, as LangChain's own event
    stream is (and LangGraph's ``messages`` mode): a chat model it watches streams its reply."""

    run_inline = True  # in the model's own thread, in order: never queued to an executor

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[T]) -> AsyncIterator[T]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        return output

    def __init__(self, sink: GuardedSink) -> None:
        self.sink = sink
        self._runs: dict[UUID, dict[str, Any]] = {}
        self._tasks: set[str] = set()

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *,
                            run_id: UUID, parent_run_id: UUID | None = None, tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        namespace = namespace_of(metadata)
        if namespace and not self.sink.subgraphs:
            return
        name = kwargs.get("name") or (serialized or {}).get("name") or "chat_model"
        run = {"name": name, "run_id": str(run_id), "tags": list(tags or []),
               "metadata": dict(metadata or {}), "parent_ids": [str(parent_run_id)] if parent_run_id else [],
               "namespace": namespace}
        self._runs[run_id] = run
        self._put(run, "on_chat_model_start", {"input": {"messages": messages}})

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: list[str] | None = None,
                       metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A node's task beginning, as ``on_chain_start`` named after the node (once per task: the
        runnables inside a node are not announced)."""
        about = metadata or {}
        task = about.get("langgraph_checkpoint_ns")
        name = kwargs.get("name") or (serialized or {}).get("name")
        if not task or name != about.get("langgraph_node") or task in self._tasks:
            return
        namespace = namespace_of(about)
        if namespace and not self.sink.subgraphs:
            return
        self._tasks.add(task)
        self._put({"name": name, "run_id": str(run_id), "tags": list(tags or []), "metadata": dict(about),
                   "parent_ids": [str(parent_run_id)] if parent_run_id else [], "namespace": namespace},
                  "on_chain_start", {"input": inputs})

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *,
                         chunk: GenerationChunk | ChatGenerationChunk | None = None, run_id: UUID,
                         parent_run_id: UUID | None = None, tags: list[str] | None = None,
                         **kwargs: Any) -> None:
        run = self._runs.get(run_id)
        if run is not None and isinstance(chunk, ChatGenerationChunk):
            self._put(run, "on_chat_model_stream", {"chunk": chunk.message})

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        generations = response.generations[0] if response.generations else []
        output = getattr(generations[0], "message", None) if generations else None
        self._put(run, "on_chat_model_end", {"output": output})

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._runs.pop(run_id, None)

    def _put(self, run: dict[str, Any], event: str, data: dict[str, Any]) -> None:
        shown = {key: value for key, value in run.items() if key != "namespace"}
        self.sink.put(run["namespace"], CHAT_EVENTS, {"event": event, **shown, "data": data})
