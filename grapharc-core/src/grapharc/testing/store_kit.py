"""What every store conformance kit shares: the store under test, and racing threads against it.

A kit subclasses ``StoreKit[TheStore]``; a plugin's test class subclasses the kit and
implements ``make_store(tmp_path)``, and sets ``durable = True`` when its store keeps what
it holds across ``close()`` and reopening.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pytest


class Closable(Protocol):
    """A store: something the kit closes after each test."""

    def close(self) -> None: ...


StoreT = TypeVar("StoreT", bound=Closable)


class StoreKit(ABC, Generic[StoreT]):
    """A kit's harness: ``make_store`` to implement, ``reopen_store`` and the ``store`` fixture."""

    durable: bool = False

    @abstractmethod
    def make_store(self, tmp_path: Path) -> StoreT:
        """Return a new, empty store of the implementation under test, located under tmp_path."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[StoreT]:
        """The store under test, closed afterwards."""
        with closing(self.make_store(tmp_path)) as store:
            yield store

    def reopen_store(self, tmp_path: Path) -> StoreT:
        """Return the store ``make_store(tmp_path)`` made, opened again after it was closed."""
        return self.make_store(tmp_path)


def race(count: int, attempt: Callable[[int], Any],
         refusals: type[Exception] | tuple[type[Exception], ...] = ()) -> tuple[list[Any], list[Exception]]:
    """Run ``attempt(i)`` in ``count`` threads released together; what they returned, and the
    ``refusals`` they raised."""
    start = threading.Barrier(count)
    won: list[Any] = []
    refused: list[Exception] = []

    def run(i: int) -> None:
        start.wait()
        try:
            won.append(attempt(i))
        except refusals as exc:
            refused.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return won, refused
