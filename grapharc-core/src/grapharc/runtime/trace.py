"""The JSONL trace writer: the one record that metrics, replay, diff, cost and every view read.

``TraceWriter`` encodes events; a sink stores the lines: ``FileTraceSink`` below, or another
``traces`` store's named by URI (``grapharc.trace_store``), holding the same bytes per event.
What follows is the file's story.

One JSON object per line, appended with a single ``os.write`` on an ``O_APPEND`` descriptor, so
threads and separate processes can share one file without interleaving lines. A line torn by a
crash is closed off with a newline before this writer's first event, so it never swallows a new
event (readers skip it as one unparseable line). Writes hold a shared ``flock`` and that first
check an exclusive one, so a line another live process is still writing is never mistaken for
a torn one.

What is written, exactly (the same with orjson, used when importable, and with stdlib json):
strings over ``MAX_STRING_CHARS`` (2,000) characters keep their first 2,000 followed by
``TRUNCATION_MARKER``; pydantic models are written as ``model_dump(mode="json")``; enum members
as their value; UUIDs as their string; tuples as arrays; NaN and infinities as null (JSON has
none); keys that are not strings as their JSON text (``1``, ``true``, ``null``) or, failing that,
their repr; anything else, and nesting deeper than 254 levels, as ``{"__repr__": repr[:2000]}``.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol
from uuid import UUID

from pydantic import BaseModel

from grapharc import trace_schema as schema
from grapharc.errors import GraphARCError

try:
    import orjson
except ImportError:  # pragma: no cover - orjson ships with langsmith on CPython
    _HAS_ORJSON = False
else:
    _HAS_ORJSON = True

MAX_STRING_CHARS = schema.MAX_STRING_CHARS
TRUNCATION_MARKER = schema.TRUNCATION_MARKER
_MAX_DEPTH = 254


class TraceClosedError(GraphARCError):
    """An event was written to a trace writer after it was closed."""


class TraceFieldError(GraphARCError):
    """An extra field would overwrite one of the fields the trace contract defines."""


class TraceOpenError(GraphARCError):
    """The trace file cannot be opened or appended to (a directory, a device, /proc, no space...)."""

    hint = "name a regular file in a directory you can write, e.g. --trace runs/trace.jsonl"


def _open_for_append(path: Path) -> int:
    """A descriptor appending to the regular file ``path`` (created with its folder if missing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise TraceOpenError(f"cannot write the trace to {path}: part of its folder is a file") from None
    except OSError as exc:
        raise TraceOpenError(f"cannot write the trace to {path}: {exc.strerror or exc}") from None
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise TraceOpenError(f"cannot write the trace to {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TraceOpenError(f"cannot write the trace to {path}: it is not a regular file")
    os.set_blocking(fd, True)
    return fd


def check_trace_writable(path: Path) -> None:
    """Raise ``TraceOpenError`` where ``path`` cannot take a trace, leaving no file or folder behind.

    For a command that creates other state first (a claim store): refused input must change nothing.
    """
    created = [p for p in (path, *path.parents) if not os.path.lexists(p)]  # deepest first
    try:
        os.close(_open_for_append(path))
    finally:
        for made in created:
            if os.path.lexists(made):
                (os.rmdir if made.is_dir() else os.unlink)(made)


class TraceSink(Protocol):
    """Where a ``TraceWriter``'s encoded lines go: a file, a database table (see ``grapharc.trace_store``)."""

    name: str

    def write(self, events: Sequence[dict[str, Any]], lines: Sequence[bytes]) -> None:
        """Store ``lines`` (each one event's JSON line, newline included) in order, all or none."""

    def close(self) -> None:
        """Release the sink; writing after this raises ``TraceClosedError``."""


class FileTraceSink:
    """Appends lines to one JSONL file with a single ``os.write`` each batch; shared safely by
    threads and processes (the module docstring says how)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self._fd = _open_for_append(self.path)
        self._lock = threading.Lock()
        self._tail_checked = False

    def write(self, events: Sequence[dict[str, Any]], lines: Sequence[bytes]) -> None:
        """Append ``lines`` with one write."""
        self._write(b"".join(lines))

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd < 0:
                raise TraceClosedError(f"the trace writer for {self.path} is closed")
            first = not self._tail_checked
            fcntl.flock(self._fd, fcntl.LOCK_EX if first else fcntl.LOCK_SH)
            try:
                if first:
                    data = self._torn_tail_fix() + data
                    self._tail_checked = True
                try:
                    written = os.write(self._fd, data)
                    if written < len(data):  # short (a full disk): finishing the line beats tearing it
                        view = memoryview(data)[written:]
                        while view:
                            view = view[os.write(self._fd, view) :]
                except OSError as exc:
                    raise TraceOpenError(f"cannot write the trace to {self.path}: {exc.strerror or exc}",
                                         hint="name a regular file on a writable disk") from None
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file; further writes raise TraceClosedError. Closing twice is harmless."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _torn_tail_fix(self) -> bytes:
        """A newline if the file ends mid-line (an earlier writer crashed), else nothing."""
        size = os.fstat(self._fd).st_size
        if size == 0:
            return b""
        os.lseek(self._fd, size - 1, os.SEEK_SET)
        return b"" if os.read(self._fd, 1) == b"\n" else b"\n"


class TraceWriter:
    """Encodes events as trace lines and hands them to a sink: a JSONL file (a bare path), or the
    sink a ``traces`` store URI names (``postgresql://HOST/DB``); safe to share between threads."""

    def __init__(self, target: str | os.PathLike[str] | TraceSink) -> None:
        self.sink = open_trace_sink(target) if isinstance(target, str | os.PathLike) else target

    def start(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
              extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``start`` event: the identity of the step and nothing else."""
        self.write(node_identity(schema.START, run_id, thread_id, attempt, graph, node, step), extra)

    def end(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
            state_delta: dict[str, Any], duration_ms: float, tokens: int, cost_usd: float | None,
            extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``end`` event: its identity plus state delta, duration and spend."""
        event = node_identity(schema.END, run_id, thread_id, attempt, graph, node, step)
        self.write(end_fields(event, state_delta, duration_ms, tokens, cost_usd), extra)

    def error(self, run_id: str, thread_id: str, attempt: int, graph: str, node: str, step: int, *,
              duration_ms: float, exception: BaseException, extra: dict[str, Any] | None = None) -> None:
        """Write a node's ``error`` event: its identity plus duration and the exception."""
        event = node_identity(schema.ERROR, run_id, thread_id, attempt, graph, node, step)
        event[schema.DURATION_MS] = duration_ms
        event[schema.EXCEPTION] = exception_document(exception)
        self.write(event, extra)

    def paused(self, phase: str, run_id: str, thread_id: str, attempt: int, graph: str, node: str,
               step: int, *, duration_ms: float) -> None:
        """Write an ``interrupt`` or ``parent_command`` event: a node that stopped without ending."""
        event = node_identity(phase, run_id, thread_id, attempt, graph, node, step)
        event[schema.DURATION_MS] = duration_ms
        self.write(event)

    def emit(self, event: dict[str, Any]) -> None:
        """Write a run-level event (``run_start``, ``run_end``, ``admission``...); ``ts`` is added
        if absent. The event must name its phase."""
        if schema.PHASE not in event:
            raise TraceFieldError(f"a trace event must carry {schema.PHASE!r}; got fields {sorted(event)}")
        event.setdefault(schema.TS, time.time())
        self.append(event)

    def append(self, event: dict[str, Any]) -> None:
        """Encode ``event`` as one line and append it with a single write."""
        self.sink.write((event,), (_encode(event),))

    def append_many(self, events: list[dict[str, Any]]) -> None:
        """Append several events, in order, with a single write."""
        if events:
            self.sink.write(events, [_encode(event) for event in events])

    def close(self) -> None:
        """Close the sink; further writes raise TraceClosedError. Closing twice is harmless."""
        self.sink.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def write(self, event: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """Append a node event built by ``node_identity``, with ``extra`` fields that must not
        overwrite its own."""
        if extra:
            clashes = event.keys() & extra.keys()
            if clashes:
                raise TraceFieldError(
                    f"extra field(s) {sorted(clashes)} would overwrite the {event[schema.PHASE]!r} "
                    "event's own fields",
                    hint="rename the extra field",
                )
            event.update(extra)
        self.append(event)


def open_trace_sink(location: str | os.PathLike[str]) -> TraceSink:
    """The sink ``location`` names: a ``traces`` store URI (``file:``, ``postgresql://``...),
    else a JSONL file at that path."""
    from grapharc.trace_store import open_traces

    return open_traces(location).open_sink()


def node_identity(phase: str, run_id: str, thread_id: str, attempt: int, graph: str, node: str,
                  step: int) -> dict[str, Any]:
    """The fields every node event starts with: which step of which run, and when."""
    return {schema.PHASE: phase, schema.RUN_ID: run_id, schema.THREAD_ID: thread_id,
            schema.ATTEMPT: attempt, schema.GRAPH: graph, schema.NODE: node, schema.STEP: step,
            schema.TS: time.time()}


def end_fields(event: dict[str, Any], state_delta: dict[str, Any], duration_ms: float, tokens: int,
               cost_usd: float | None) -> dict[str, Any]:
    """``event`` (a node identity) completed as an ``end``: the delta that landed and the spend."""
    event[schema.STATE_DELTA] = state_delta
    event[schema.DURATION_MS] = duration_ms
    event[schema.TOKENS] = tokens
    event[schema.COST_USD] = cost_usd
    return event


def exception_document(exception: BaseException) -> dict[str, str]:
    """An exception as the trace records it: its qualified type name and its message."""
    return {schema.EXCEPTION_TYPE: _qualified_name(type(exception)),
            schema.EXCEPTION_MESSAGE: str(exception)}


def _qualified_name(cls: type) -> str:
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _encode(event: dict[str, Any]) -> bytes:
    """One JSON line. The fast encoder runs first; the cleaning walk only when it failed or the
    line is long enough that a string in it may need truncating."""
    try:
        line = _dumps(event)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _dumps_clean(_clean(event, 0))
    if len(line) <= MAX_STRING_CHARS:
        return line
    cleaned = _clean(event, 0)
    return line if cleaned is event else _dumps_clean(cleaned)


def _dumps_clean(value: Any) -> bytes:
    """Encode an already-cleaned value; stdlib json takes what orjson cannot (ints over 64 bits)."""
    try:
        return _dumps(value)
    except (TypeError, ValueError, OverflowError):
        return _dumps_stdlib(value)


def _default(value: Any) -> Any:
    """What the encoders do with a value JSON has no type for; never raises."""
    if isinstance(value, BaseModel):
        return _model_json(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float):  # a float subclass, which orjson does not take natively
        return float(value)
    return _repr_of(value)


_STDLIB_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default
)


def _dumps_stdlib(value: Any) -> bytes:
    return (_STDLIB_ENCODER.encode(value) + "\n").encode("utf-8")


def _dumps_orjson(value: Any) -> bytes:
    return orjson.dumps(value, default=_default, option=_ORJSON_OPTIONS)


if _HAS_ORJSON:
    _ORJSON_OPTIONS = (
        orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    _dumps: Callable[[Any], bytes] = _dumps_orjson
else:  # pragma: no cover - orjson ships with langsmith on CPython
    _dumps = _dumps_stdlib


def _clean(value: Any, depth: int) -> Any:
    """``value`` with the rules in the module docstring applied, made of JSON types only.

    Returns ``value`` itself when nothing needed changing, so a clean event is not re-encoded.
    """
    kind = type(value)
    if kind is str:
        return _clean_str(value)
    if value is None or kind is int or kind is bool:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if depth >= _MAX_DEPTH:
        return _repr_of(value)
    if isinstance(value, dict):
        return _clean_dict(value, depth)
    if isinstance(value, list | tuple):
        items = [_clean(item, depth + 1) for item in value]
        if kind is list and all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    if isinstance(value, Enum):
        return _clean(value.value, depth + 1)
    if isinstance(value, str):
        return _clean_str(str.__str__(value))
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _clean(float(value), depth)
    return _clean(_default(value), depth + 1)


def _clean_dict(value: dict[Any, Any], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    changed = type(value) is not dict
    for key, item in value.items():
        new_key = _clean_str(key) if type(key) is str else _clean_key(key)
        new_item = _clean(item, depth + 1)
        changed = changed or new_key is not key or new_item is not item
        out[new_key] = new_item
    return out if changed else value


def _clean_key(key: Any) -> str:
    """A dict key as stdlib json would write it, or its repr where json would refuse it."""
    if isinstance(key, Enum):
        return _clean_key(key.value)
    if isinstance(key, str):
        return _clean_str(str.__str__(key))
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return float.__repr__(key)
    return _repr_of(key)[schema.REPR_KEY]


def _clean_str(text: str) -> str:
    if len(text) > MAX_STRING_CHARS:
        text = text[:MAX_STRING_CHARS] + TRUNCATION_MARKER
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them visible as escapes
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _model_json(model: BaseModel) -> Any:
    try:
        return model.model_dump(mode="json")
    except Exception:
        return _repr_of(model)


def _repr_of(value: Any) -> dict[str, str]:
    try:
        text = repr(value)
    except Exception:
        text = f"<unrepresentable {type(value).__qualname__}>"
    return {schema.REPR_KEY: _clean_str(text[:MAX_STRING_CHARS])}
