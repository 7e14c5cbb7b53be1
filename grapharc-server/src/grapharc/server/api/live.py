"""A run's live events: the stream modes the audit trail cannot render, kept in the run's durable log.

``messages-tuple``, ``messages``, ``custom``, ``debug``, ``tasks`` and ``checkpoints`` (and
``events``' chat-model events, and with ``stream_subgraphs`` the subgraphs' ``values`` and
``updates``) come from what LangGraph streams as the turn runs (``grapharc.session.live``). The
worker executing the run hands its turn a ``LiveLog``, which turns each chunk into the SSE events
LangGraph's server sends for the modes the run asked for (``Translator``), with every configured
secret redacted, and appends them to the run's live log in the run store (``RunStore.append_live``)
in batches: at most ``FLUSH_SECONDS`` after an event, and before a node's completion is recorded
on the trail, so a node's tokens are durable before its update. Each batch wakes the run's readers
(``Progress.notify``). The log is durable, so a stream reads a run executing on another worker the
same way, and a reconnect resumes it (``grapharc.server.api.streaming`` merges it with the trail).

Wire formats, as LangGraph's server sends them: ``messages-tuple`` is the event ``messages`` with
``[message_chunk, metadata]``; ``messages`` sends ``messages/metadata`` (``{id: {"metadata": ...}}``)
when a message first appears, then ``messages/partial`` with the message accumulated so far after
each chunk, and ``messages/complete`` with the whole message once its last chunk has come (or at
once for a message a node returned without streaming it); a subgraph's event is named
``mode|ns`` (its namespace's segments joined by ``|``).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, BaseMessageChunk, message_chunk_to_message
from pydantic_core import PydanticSerializationError, to_json

from grapharc.redaction import Redactor, current_redactor
from grapharc.runs.contracts import RunStore
from grapharc.runs.records import LiveEvent, RunRecord
from grapharc.server.api.encoding import json_text
from grapharc.server.api.progress import Progress
from grapharc.session.live import CHAT_EVENTS, NS_SEP
from grapharc.session.records import AuditEntry
from grapharc.stores import offload

LIVE_MODES = ("messages-tuple", "messages", "custom", "debug", "tasks", "checkpoints")
"""The stream modes only the live log serves."""
FLUSH_SECONDS = 0.05
"""The longest a live event waits in memory before its batch is written."""
SUBGRAPHS = "stream_subgraphs"
"""The key of a run's request saying it streams its subgraphs' events too."""
_PASSED_THROUGH = ("custom", "debug", "tasks", "checkpoints")
TOKEN_MODES = frozenset({"messages-tuple", "messages", "events"})
"""The modes with an event per token."""

Event = tuple[str, str, Any]
"""A live event before it is kept: (the stream mode it is sent in, the SSE event name, its data)."""


def graph_modes(modes: list[str] | tuple[str, ...], subgraphs: bool) -> frozenset[str]:
    """The LangGraph stream modes (and ``CHAT_EVENTS``) a turn streams for a run's ``modes``."""
    wanted = {"messages" if mode == "messages-tuple" else mode for mode in modes if mode in LIVE_MODES}
    if "events" in modes:
        wanted.add(CHAT_EVENTS)
    if subgraphs:
        wanted |= {mode for mode in ("values", "updates") if mode in modes}
    return frozenset(wanted)


def streams_live(run: RunRecord) -> bool:
    """Whether the run's turn is given a live log (it asked for a mode only the log serves, for
    ``events``' chat-model events, or for its subgraphs)."""
    return bool(graph_modes(run.stream_modes, bool(run.request.get(SUBGRAPHS))))


def live_events(runs: RunStore, run: RunRecord, after: int) -> list[LiveEvent]:
    """The run's live events numbered past ``after`` (none for a run without a log, or not begun).
    A stream reads them after the trail's entries: a node's entry is written after its live events
    are, so every entry read has the events before it read too."""
    if run.after_seq is None or not streams_live(run):
        return []
    return runs.live_after(run.run_id, after)


T = TypeVar("T", bound=tuple[AuditEntry, str, int])


def merged(trail: Iterable[T], logged: list[LiveEvent]) -> Iterator[T | LiveEvent]:
    """The trail's pending events and the live ones in the order they were kept (``at``, on the run's
    worker's clock); a live event before a trail entry kept at the same time."""
    return heapq.merge(logged, trail, key=lambda item: item.at if isinstance(item, LiveEvent) else item[0].at)


class Translator:
    """LangGraph's live chunks as the SSE events of the requested ``modes`` (see the module docstring)."""

    def __init__(self, modes: list[str] | tuple[str, ...], subgraphs: bool) -> None:
        self.modes = frozenset(modes)
        self.subgraphs = subgraphs
        self._messages: dict[str, BaseMessage] = {}

    def events(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> list[Event]:
        """The events one chunk makes (none for what the requested modes do not show)."""
        if namespace and not self.subgraphs:
            return []
        if mode == "messages":
            return self._message_events(namespace, *chunk)
        if mode in ("values", "updates"):  # a subgraph's: the trail renders the top graph's own
            return [(mode, _named(mode, namespace), chunk)] if namespace and mode in self.modes else []
        if mode == CHAT_EVENTS:
            return [("events", _named("events", namespace), chunk)] if "events" in self.modes else []
        shown = mode in _PASSED_THROUGH and mode in self.modes
        return [(mode, _named(mode, namespace), chunk)] if shown else []

    def _message_events(self, namespace: tuple[str, ...], message: BaseMessage,
                        metadata: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        if "messages-tuple" in self.modes:
            events.append(("messages-tuple", _named("messages", namespace), [message, metadata]))
        if "messages" not in self.modes:
            return events
        key = str(message.id)
        known = self._messages.get(key)
        if known is None:
            events.append(("messages", _named("messages/metadata", namespace), {key: {"metadata": metadata}}))
        if not isinstance(message, BaseMessageChunk):
            self._messages.pop(key, None)
            return [*events, ("messages", _named("messages/complete", namespace), [message])]
        whole = message if not isinstance(known, BaseMessageChunk) else known + message
        self._messages[key] = whole
        so_far = message_chunk_to_message(whole)
        events.append(("messages", _named("messages/partial", namespace), [so_far]))
        if getattr(message, "chunk_position", None) == "last":
            del self._messages[key]
            events.append(("messages", _named("messages/complete", namespace), [so_far]))
        return events


def _json(mode: str, data: Any) -> str:
    """An event's data as JSON text: a token's (``TOKEN_MODES``) by pydantic's serializer, a message
    being a pydantic model (``json_text``'s general walk cost some 600 µs a token, this some 10);
    the rest as every view writes state values (``json_text``), which a token's falls back to when
    pydantic cannot write it."""
    if mode in TOKEN_MODES:
        with contextlib.suppress(PydanticSerializationError):
            return to_json(data, bytes_mode="base64", inf_nan_mode="null").decode()
    return json_text(data)


def _named(event: str, namespace: tuple[str, ...]) -> str:
    """An event's SSE name: LangGraph's ``mode|ns`` for a subgraph's."""
    return NS_SEP.join((event, *namespace)) if namespace else event


class LiveLog:
    """A run's ``LiveSink``: chunks translated, redacted and appended to the run's log in batches.

    ``put`` may be called from any thread (a sync node's chat model calls back in its own); the
    batches are written one at a time, in order, so a reader never sees an event before an earlier
    one."""

    def __init__(self, runs: RunStore, run: RunRecord, progress: Progress, clock: Callable[[], float],
                 last: int, redactor: Redactor | None = None) -> None:
        subgraphs = bool(run.request.get(SUBGRAPHS))
        self.modes = graph_modes(run.stream_modes, subgraphs)
        self.subgraphs = subgraphs
        self.runs, self.run, self.progress, self.clock = runs, run, progress, clock
        self.redactor = redactor if redactor is not None else current_redactor()
        self._translator = Translator(run.stream_modes, subgraphs)
        self._n = last
        self._pending: list[LiveEvent] = []
        self._lock = threading.Lock()
        self._writing = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._flushes: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, runs: RunStore, run: RunRecord, progress: Progress,
                   clock: Callable[[], float]) -> LiveLog:
        """The run's log, numbering on from its last event (a reclaimed run's log goes on)."""
        return cls(runs, run, progress, clock, await offload.to_thread(runs.last_live, run.run_id))

    def put(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        """``LiveSink.put``: keep the chunk's events for the next batch."""
        with self._lock:
            events = self._translator.events(namespace, mode, chunk)
            if not events:
                return
            now = self.clock()
            for shown_in, name, data in events:
                self._n += 1
                text = self.redactor.redact(_json(shown_in, data)) if self.redactor else _json(shown_in, data)
                self._pending.append(LiveEvent(n=self._n, mode=shown_in, event=name, data=text, at=now))
        if _running_loop() is self._loop:
            self._schedule()
        else:
            self._loop.call_soon_threadsafe(self._schedule)

    async def flush(self) -> None:
        """``LiveSink.flush``: write what is pending, after any batch being written, and wake readers."""
        async with self._writing:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return
            await offload.to_thread(self.runs.append_live, self.run.run_id, self.run.thread_id, batch)
        self.progress.notify(self.run.thread_id)

    async def close(self) -> None:
        """Write what is pending and stop the timer (the run has ended)."""
        if self._timer is not None:
            self._timer.cancel()
        for task in list(self._flushes):
            with contextlib.suppress(Exception):
                await task
        await self.flush()

    def _schedule(self) -> None:
        """Flush within ``FLUSH_SECONDS`` unless a flush is already due."""
        if self._timer is None:
            self._timer = self._loop.call_later(FLUSH_SECONDS, self._due)

    def _due(self) -> None:
        self._timer = None
        task = self._loop.create_task(self.flush(), name=f"live:{self.run.run_id}")
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
