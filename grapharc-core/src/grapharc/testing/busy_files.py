"""Make every store call tried in place on the event loop meet busy SQLite files, as another process's
write would, so a test can check that such a call is undone and sent to the store pool instead.

``offload.nearby`` tries a call in place (``grapharc.stores.in_place.run``) and, where it would
wait, sends it to the store pool (``offload.to_thread``). Inside ``busy_in_place`` another
connection takes the write lock of each file named just before each attempt in place, and holds it
until the next call arrives in the store pool (whose thread then waits for nothing): a call in
place that writes none of those files runs in place still.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import Any

from grapharc.stores import in_place, offload


class BusyAttempts:
    """What the block saw: the calls tried in place on busy files, and those sent to the store pool."""

    def __init__(self) -> None:
        self.tried: list[str] = []
        self.sent: list[str] = []


def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", repr(func))


@contextmanager
def busy_in_place(paths: Sequence[Path]) -> Iterator[BusyAttempts]:
    """Within the block, each call tried in place meets every file of ``paths`` locked by another
    connection (see the module); the calls tried and sent, by name."""
    attempts = BusyAttempts()
    original_run, original_to_thread = in_place.run, offload.to_thread
    with ExitStack() as stack:
        others = [stack.enter_context(closing(sqlite3.connect(path, isolation_level=None))) for path in paths]

        def release() -> None:
            for other in others:
                if other.in_transaction:
                    other.execute("COMMIT")

        def run(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
            for other in others:
                if not other.in_transaction:
                    other.execute("BEGIN IMMEDIATE")
            attempts.tried.append(_name(func))
            return original_run(func, *args, **kwargs)

        async def to_thread(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
            release()
            attempts.sent.append(_name(func))
            return await original_to_thread(func, *args, **kwargs)

        in_place.run, offload.to_thread = run, to_thread
        try:
            yield attempts
        finally:
            in_place.run, offload.to_thread = original_run, original_to_thread
            release()
