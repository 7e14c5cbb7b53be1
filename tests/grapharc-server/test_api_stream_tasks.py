"""What a run's stream costs the event loop: answered over ASGI (in this process, real SQLite stores
and the worker loop), it starts one task beside its own, whatever the number of events it sends,
and then closes its response."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from starlette.types import Message
from test_api_stream_cursor import _ended_relay_run, with_worker

from grapharc.server.api.context import ApiContext
from grapharc.server.api.streaming import sse_response


class TasksStarted:
    """The tasks started by ``root`` or by a task it started (and so on), as the loop starts them."""

    def __init__(self, root: asyncio.Task[Any]) -> None:
        self.family: set[asyncio.Task[Any]] = {root}
        self.started = 0
        loop = asyncio.get_running_loop()
        self._before = loop.get_task_factory()
        loop.set_task_factory(self._factory)

    def _factory(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any],
                 **kwargs: Any) -> asyncio.Future[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        if asyncio.current_task(loop) in self.family:
            self.family.add(task)
            self.started += 1
        return task

    def stop(self) -> None:
        asyncio.get_running_loop().set_task_factory(self._before)


def test_a_streamed_run_starts_one_task_beside_its_own_whatever_it_sends(tmp_path: Path) -> None:
    async def scenario(ctx: ApiContext) -> tuple[int, list[Message]]:
        run = await _ended_relay_run(ctx, tmp_path / "release")
        response = sse_response(ctx, run, ["values", "updates", "events"], None, cancel_on_disconnect=False)
        sent: list[Message] = []
        never = asyncio.Event()

        async def receive() -> Message:
            await never.wait()  # the client stays
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        async def answer() -> None:
            tasks = TasksStarted(asyncio.current_task())  # type: ignore[arg-type]
            try:
                await response({"type": "http", "method": "POST"}, receive, send)
            finally:
                tasks.stop()
            counted.append(tasks.started)

        counted: list[int] = []
        await asyncio.create_task(answer())
        return counted[0], sent

    started, sent = with_worker(tmp_path, scenario)
    bodies = [m for m in sent if m["type"] == "http.response.body"]
    assert sent[0]["type"] == "http.response.start"
    assert len(bodies) > 10 and all(m["more_body"] for m in bodies[:-1])  # an event each
    assert bodies[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert started == 1  # the watch for a disconnect, which pings too
