"""``threads.prune`` told as stories an async ``langgraph-sdk`` client plays against a real server
with api_graphs.py's graphs (test_api_prune.py on SQLite; tests/grapharc-postgres on PostgreSQL,
its calls alternating between two workers): keep_latest keeps each thread with its latest
checkpoint only and says so on its trail, delete removes threads, unknown ids are skipped, a thread
with a run in flight or an open approval refuses the whole request, and bad input is a 422."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from api_graphs import GATED_WAITER, WAITER


def trail(url: str, thread: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The thread's audit trail, as GET /threads/{id}/trace answers it."""
    answer = httpx.get(f"{url}/threads/{thread}/trace", headers=headers, timeout=30)
    answer.raise_for_status()
    return [json.loads(line) for line in answer.text.splitlines()]


async def refused(call: Any) -> tuple[int, dict[str, Any]]:
    """The status and problem document of a request the server refuses."""
    try:
        await call
    except httpx.HTTPStatusError as refusal:  # the SDK's APIStatusError is one
        return refusal.response.status_code, refusal.response.json()
    raise AssertionError("the request was accepted")


async def waited_thread(client: Any, release: Path, runs: int = 1) -> str:
    """A waiter thread run ``runs`` times to its end (``release`` exists, so each run ends at once)."""
    thread = str((await client.threads.create(graph_id=WAITER))["thread_id"])
    for _ in range(runs):
        await client.runs.wait(thread, WAITER, input={"release_file": str(release)})
    return thread


async def history_ids(client: Any, thread: str) -> list[str]:
    """The ids of every checkpoint the thread has, newest first."""
    return [s["checkpoint"]["checkpoint_id"] for s in await client.threads.get_history(thread, limit=1000)]


async def keep_latest_then_delete(client: Any, url: str, release: Path) -> None:
    """keep_latest leaves each thread its latest checkpoint (same state, runs carry on from it) and a
    ``pruned`` entry on its trail; delete removes the threads; unknown ids are not counted."""
    release.touch()
    first, second = [await waited_thread(client, release, runs=2) for _ in range(2)]
    before = await client.threads.get_state(first)
    assert len(await history_ids(client, first)) > 2
    kept = await client.threads.prune([first, second, "no-such-thread", first], strategy="keep_latest")
    assert kept == {"pruned_count": 2}
    for thread in (first, second):
        assert len(await history_ids(client, thread)) == 1
    after = await client.threads.get_state(first)
    assert (after["values"], after["checkpoint"]) == (before["values"], before["checkpoint"])
    pruned = [e["detail"] for e in trail(url, first) if e["kind"] == "pruned"]
    assert len(pruned) == 1 and pruned[0]["by"] == "api" and pruned[0]["strategy"] == "keep_latest"
    assert pruned[0]["checkpoints_dropped"] > 1
    await client.runs.wait(first, WAITER, input={"release_file": str(release)})  # carries on from there
    assert len(await history_ids(client, first)) > 1
    assert await client.threads.prune([first, second]) == {"pruned_count": 2}
    for thread in (first, second):
        assert (await refused(client.threads.get(thread)))[0] == 404
    assert await client.threads.prune(["no-such-thread"]) == {"pruned_count": 0}
    assert await client.threads.prune([]) == {"pruned_count": 0}


async def refuse_busy_and_waiting_threads(client: Any, release: Path) -> None:
    """A thread with a run in flight, or waiting on an approval, refuses the whole prune: 409 naming
    it, and the other threads named keep every checkpoint, whichever the strategy."""
    ready = release.with_name(f"{release.name}-ready")
    ready.touch()
    idle = await waited_thread(client, ready, runs=2)
    held = await history_ids(client, idle)
    busy = str((await client.threads.create(graph_id=WAITER))["thread_id"])
    run = await client.runs.create(busy, WAITER, input={"release_file": str(release)})
    for strategy in ("delete", "keep_latest"):
        status, problem = await refused(client.threads.prune([idle, busy], strategy=strategy))
        assert status == 409 and problem["detail"] == f"thread {busy} has a run pending or in flight", problem
    release.touch()
    await client.runs.join(busy, run["run_id"])
    gated = str((await client.threads.create(graph_id=GATED_WAITER))["thread_id"])
    await client.runs.wait(gated, GATED_WAITER, input={"release_file": str(release)})
    approval = (await client.threads.get(gated))["interrupts"]
    assert approval, "the gated waiter waits on the credit desk"
    for strategy in ("delete", "keep_latest"):
        status, problem = await refused(client.threads.prune([idle, gated], strategy=strategy))
        assert status == 409 and f"thread {gated} waits on approval" in problem["detail"], problem
    assert await history_ids(client, idle) == held
    assert (await client.threads.get(gated))["status"] == "interrupted"


async def refuse_bad_input(client: Any, release: Path) -> None:
    """A strategy that is neither, or thread ids that are not a list of strings, are a 422 naming
    the field; nothing is pruned."""
    release.touch()
    thread = await waited_thread(client, release, runs=2)
    held = await history_ids(client, thread)
    asked = ((client.threads.prune([thread], strategy="everything"), "strategy"),
             (client.threads.prune(thread), "thread_ids"),
             (client.threads.prune([thread, 7]), "thread_ids"),
             (client.threads.prune({"ids": [thread]}), "thread_ids"))
    for call, field in asked:
        status, problem = await refused(call)
        assert status == 422 and field in [e["loc"][1] for e in problem["errors"]], problem
    assert await history_ids(client, thread) == held
