"""What the SQLite stores' hottest calls run besides their SQL, counted (not timed): a streamed run
checks its lease before each of about eleven checkpoint writes and reads its thread and run several
times, so a function call more in each is paid many times a run."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from grapharc.runtime.budget import Budget
from grapharc.session import SqliteSessionStore
from grapharc.session.contracts import graph_of
from grapharc.session.errors import UnknownSessionError
from grapharc.session.lease import Lease
from grapharc.session.records import READABLE, Session, iso, unreadable_times
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.testing.run_store_kit import new_run


def calls_of(action: Callable[[], Any]) -> Counter[str]:
    """The functions ``action()`` calls, Python (``file:function``) and C (``C:name``), by count."""
    seen: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            seen[f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"] += 1
        elif event == "c_call":
            seen[f"C:{arg.__qualname__}"] += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    seen.pop("C:setprofile", None)
    return seen


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[SqliteSessionStore, Lease]]:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    now = time.time()
    store.create("t", "g", now)
    lease = store.claim_start("t", runner="r", ttl=30, now=now, input={}, inbox=None)
    assert store.holds(lease)  # this thread's connection opened
    yield store, lease
    store.close()


def test_a_lease_check_takes_its_connection_with_one_lock_and_nothing_else(
        held: tuple[SqliteSessionStore, Lease]) -> None:
    store, lease = held
    calls = calls_of(lambda: store.holds(lease))

    assert calls["C:RLock.acquire"] == calls["C:RLock.release"] == 1
    # no condition notified, no count of connections in use kept, no generator context manager
    bookkeeping = ("threading.py:", "contextlib.py:", "__init__.py:")
    assert not [name for name in calls if name.startswith(bookkeeping)]
    assert calls["C:Connection.execute"] == 1


def test_reading_a_thread_with_ordinary_times_builds_no_date(held: tuple[SqliteSessionStore, Lease]) -> None:
    store, _ = held
    calls = calls_of(lambda: store.get("t"))

    # its three times are checked against the calendar's bounds, not each turned into a date
    assert calls["C:datetime.fromtimestamp"] == 0
    assert calls["C:Connection.execute"] == 5  # BEGIN, its row, its open approvals, its last node, COMMIT


@pytest.mark.parametrize("moment", [
    0, -1, 1.5, 1796670249.80679, 10**10, True,
    READABLE[0], READABLE[1], READABLE[0] + 1e-6, READABLE[1] - 1e-6,
    READABLE[0] - 86400 * 2, READABLE[1] + 86400 * 2, 1e308, -1e308, float("inf"), float("-inf"),
    float("nan"), 10**30, "2026-01-01", b"1", None])
def test_a_time_is_flagged_unreadable_exactly_when_iso_cannot_read_it(moment: Any) -> None:
    expected = None if moment is None or iso(moment) is not None else f"unreadable at={moment!r}"
    assert unreadable_times(at=moment) == expected


def test_a_run_read_again_unchanged_is_the_same_record_with_nothing_rebuilt(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    now = time.time()
    run = store.add(new_run("t"), exclusive=True)
    claimed = store.claim_next("w", now, 30.0, [run.assistant_id])
    assert claimed is not None

    calls = calls_of(lambda: store.refreshed(claimed))
    assert store.refreshed(claimed) is claimed  # what a stream reads after each node of a running run
    assert not [name for name in calls if name.startswith("dataclasses.py:")]
    assert calls["C:Connection.execute"] == 1

    assert store.finish(run.run_id, "w", "success", now + 1, end_seq=3)
    ended = store.refreshed(claimed)
    assert (ended.status, ended.end_seq, ended.updated_at) == ("success", 3, now + 1)
    assert ended == store.get("t", run.run_id)
    store.close()


def test_a_thread_s_graph_is_one_statement_and_a_store_without_its_own_read_answers_by_get(
        held: tuple[SqliteSessionStore, Lease]) -> None:
    store, _ = held
    calls = calls_of(lambda: graph_of(store, "t"))
    assert calls["C:Connection.execute"] == 1 and graph_of(store, "t") == "g"

    class Plain:
        """A store with the protocol's ``get`` and no ``graph_of`` of its own."""

        def get(self, thread_id: str) -> Session:
            return store.get(thread_id)

    assert graph_of(Plain(), "t") == "g"  # type: ignore[arg-type]
    with pytest.raises(UnknownSessionError):
        graph_of(Plain(), "nope")  # type: ignore[arg-type]


def test_a_run_s_budget_and_stream_modes_are_decoded_once_for_every_read_of_the_same_text(
        tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    ceiling = Budget(max_iterations=25, max_seconds=300.0)
    added = store.add(dataclasses.replace(new_run("t"), budget=ceiling, stream_modes=("updates",)),
                      exclusive=True)
    assert store.get("t", added.run_id) == added

    calls = calls_of(lambda: store.get("t", added.run_id))
    read = store.get("t", added.run_id)
    assert (read.budget, read.stream_modes) == (ceiling, ("updates",))
    assert calls["budget.py:__post_init__"] == 0  # checked when first read, not on every read
    assert calls["__init__.py:loads"] == 2  # the request and the metadata (dicts, the reader's own)
    store.close()


def test_an_audit_entry_is_redacted_without_reading_the_environment_again(
        held: tuple[SqliteSessionStore, Lease]) -> None:
    store, lease = held
    store.record_directive(lease, {"goto": "warm"}, time.time())
    calls = calls_of(lambda: store.record_directive(lease, {"goto": "next"}, time.time()))

    # the redactor made for the entry before is still current: no variable's name read again
    assert calls["redaction.py:secret_names"] == 0 and calls["redaction.py:__init__"] == 0
    assert calls["redaction.py:scrub"] >= 1


def test_a_json_column_is_written_by_an_encoder_built_once(held: tuple[SqliteSessionStore, Lease],
                                                             tmp_path: Path) -> None:
    store, lease = held
    calls = calls_of(lambda: store.record_directive(lease, {"goto": "next"}, time.time()))
    assert calls["encoder.py:encode"] == 1 and calls["encoder.py:__init__"] == 0

    runs = SqliteRunStore(tmp_path / "runs.db")
    run = new_run("t")
    calls = calls_of(lambda: runs.add(run, exclusive=True))
    assert calls["encoder.py:__init__"] == 0  # its request and its metadata by one encoder too
    runs.close()
