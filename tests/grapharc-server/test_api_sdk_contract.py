"""The official ``langgraph-sdk`` client against a real ``grapharc serve``: thread, streamed run in
values/updates/events, an interrupt answered by a Command, join, cancel, and listing runs (the stories are in
sdk_stories.py; tests/grapharc-postgres drives them alternating between two workers)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langgraph_sdk import get_client
from sdk_stories import join_one_run_and_cancel_another, list_a_threads_runs, stream_to_interrupt_and_resume


def test_the_sdk_streams_a_run_to_its_interrupt_and_resumes_it_with_a_command(api_server: str) -> None:
    asyncio.run(stream_to_interrupt_and_resume(get_client(url=api_server)))


def test_the_sdk_joins_a_background_run_and_cancels_another(api_server: str, tmp_path: Path) -> None:
    asyncio.run(join_one_run_and_cancel_another(get_client(url=api_server), tmp_path))


def test_the_sdk_lists_a_threads_runs_newest_first_by_page_status_and_fields(api_server: str) -> None:
    asyncio.run(list_a_threads_runs(get_client(url=api_server)))
