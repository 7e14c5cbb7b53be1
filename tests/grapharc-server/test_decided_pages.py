"""The pages of ``/inbox/decided`` as ``grapharc.server.service.decided`` makes them, over a real SQLite
session store: decisions on threads the reader may not read are skipped without leaving a page short,
across the batches the store is read in, and walking older then newer pages shows every readable
decision once, in order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from grapharc.server.service import decided
from grapharc.server.service.decided import DecidedPage, decided_page
from grapharc.session.manager import SessionManager
from grapharc.session.records import Session
from grapharc.testing.sessions import TTL, make_hold, pause

DECISIONS = 13
HIDDEN = {"t01", "t02", "t03", "t07", "t12"}
"""Threads the reader may not read: a run of them at the newest end, and others between."""


@pytest.fixture
def manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SessionManager]:
    """Sessions with one decision on each of ``DECISIONS`` threads, decided a second apart (t12 the
    newest); the store is read two decisions at a time, so every page crosses batches."""
    monkeypatch.setattr(decided, "BATCH", 2)
    opened = SessionManager(tmp_path / "sessions")
    for i in range(DECISIONS):
        [asked] = pause(opened.store, f"t{i:02d}", make_hold())
        opened.store.decide(asked.thread_id, asked.approval_id, "approved", decider="ana", now=100.0 + i,
                            current=make_hold(), runner="r", ttl=TTL)
    yield opened
    opened.close()


def readable(thread: Session) -> bool:
    return thread.thread_id not in HIDDEN


def threads(page: DecidedPage) -> list[str]:
    return [d.approval.thread_id for d in page.decisions]


def test_walking_older_then_newer_shows_each_readable_decision_once_in_order(manager):
    expected = [f"t{i:02d}" for i in reversed(range(DECISIONS)) if f"t{i:02d}" not in HIDDEN]
    pages = [decided_page(manager, readable, 3)]
    while pages[-1].older is not None:
        pages.append(decided_page(manager, readable, 3, before=pages[-1].older))
    assert [threads(p) for p in pages] == [expected[i:i + 3] for i in range(0, len(expected), 3)]
    assert pages[0].newer is None and all(p.newer is not None for p in pages[1:])
    back = [pages[-1]]
    while back[-1].newer is not None:
        back.append(decided_page(manager, readable, 3, after=back[-1].newer))
    assert [threads(p) for p in back] == [threads(p) for p in reversed(pages)]


def test_a_mark_with_nothing_newer_left_shows_the_first_page(manager):
    first = decided_page(manager, readable, 3)
    newest = first.decisions[0].approval
    again = decided_page(manager, readable, 3, after=(newest.decided_at or 0.0, newest.approval_id))
    assert threads(again) == threads(first) and again.newer is None


def test_a_reader_who_may_read_nothing_gets_an_empty_page(manager):
    page = decided_page(manager, lambda _thread: False, 3)
    assert (page.decisions, page.newer, page.older) == ([], None, None)
