"""The official ``langgraph-sdk`` client against a real ``grapharc serve``: thread, streamed run in
values/updates/events, an interrupt answered by a Command, join, cancel, listing runs, and editing,
forking and copying a thread (the stories are in sdk_stories.py; tests/grapharc-postgres drives them
alternating between two workers)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from langgraph_sdk import get_client
from sdk_stories import (
    edit_fork_and_copy,
    join_one_run_and_cancel_another,
    list_a_threads_runs,
    stream_to_interrupt_and_resume,
)
from server_process import api_server_url

api_server = api_server_url("sdk-contract")
"""The module's one server: each test makes threads of its own and reads only those."""


def test_the_sdk_streams_a_run_to_its_interrupt_and_resumes_it_with_a_command(api_server: str) -> None:
    asyncio.run(stream_to_interrupt_and_resume(get_client(url=api_server)))


def test_the_sdk_joins_a_background_run_and_cancels_another(api_server: str, tmp_path: Path) -> None:
    asyncio.run(join_one_run_and_cancel_another(get_client(url=api_server), tmp_path))


def test_the_sdk_lists_a_threads_runs_newest_first_by_page_status_and_fields(api_server: str) -> None:
    asyncio.run(list_a_threads_runs(get_client(url=api_server)))


def test_the_sdk_edits_forks_and_copies_a_thread_and_the_trails_say_api_asked(api_server: str) -> None:
    thread, copied = asyncio.run(edit_fork_and_copy(get_client(url=api_server)))
    trails = {t: [json.loads(line) for line in httpx.get(f"{api_server}/threads/{t}/trace").text.splitlines()]
              for t in (thread, copied)}
    asked = [(e["kind"], e["detail"].get("turn"), e["detail"].get("as_node"), e["detail"]["by"])
             for e in trails[thread] if e["kind"] == "updated" or e["detail"].get("turn") == "fork"]
    assert asked == [("updated", None, "last_leg", "api"), ("claimed", "fork", None, "api")]
    assert [(e["kind"], e["detail"]["from"], e["detail"]["by"]) for e in trails[copied]] == [
        ("copied", thread, "api")]
