"""The ``langgraph-sdk`` calls sdk_differential.py makes on each server, in order: every method of
threads, runs, assistants, crons and store, with the same arguments on both servers.

A call's body takes the SDK's async client and a context dict that earlier calls fill (the thread
they made, each server's own assistant id...); a call needing a key no earlier call set is
skipped on that server. It returns what the server answered (a ``Streamed`` for a stream), or
raises what the SDK raised: sdk_differential.py observes either.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CREDIT, CHAT, WAITER = "credit-approval", "chat", "waiter"
QUESTION = {"messages": [{"type": "human", "content": "Where is my loan?"}]}
THREAD_STREAM_SETTLE_SECONDS = 1.0
"""How long a thread's stream is given to open before its waiter is released."""


@dataclass
class Streamed:
    """A stream's parts, as a call hands them to ``observe``."""

    parts: list[Any] = field(default_factory=list)


Step = Callable[[Any, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Call:
    """One SDK call: its name, the context keys it needs (set by earlier calls), its body, and
    whether it is meant to fail (then langgraph dev's failure is the behaviour to match)."""

    name: str
    needs: tuple[str, ...]
    body: Step
    fails: bool = False


CALLS: list[Call] = []
MEANT_TO_FAIL: set[str] = set()
"""The calls whose failure on langgraph dev is what they check, not a reason to give no verdict."""


def call(name: str, *needs: str, fails: bool = False) -> Callable[[Step], Step]:
    """Add the decorated body to ``CALLS`` as ``name``, run only where ``needs`` are in the context."""
    def add(body: Step) -> Step:
        CALLS.append(Call(name, needs, body, fails))
        if fails:
            MEANT_TO_FAIL.add(name)
        return body
    return add


@dataclass(frozen=True)
class From:
    """An argument of a ``plain`` call that an earlier call left in the context under ``key``."""

    key: str


def plain(name: str, method: str, *args: Any, **kwargs: Any) -> None:
    """Add a call that is one SDK method (``"threads.get"``) with these arguments; a ``From`` among
    them (in a list too) is read from the context, and the call needs it there."""
    def given(value: Any, ctx: dict[str, Any]) -> Any:
        if isinstance(value, From):
            return ctx[value.key]
        return [given(item, ctx) for item in value] if isinstance(value, list) else value

    def body(c: Any, ctx: dict[str, Any]) -> Awaitable[Any]:
        resource, verb = method.split(".")
        return getattr(getattr(c, resource), verb)(*given(list(args), ctx),
                                                   **{k: given(v, ctx) for k, v in kwargs.items()})

    named = [*args, *kwargs.values()]
    needs = tuple(v.key for v in [*named, *(i for v in named if isinstance(v, list) for i in v)]
                  if isinstance(v, From))
    call(name, *needs)(body)


async def streamed(parts: AsyncIterator[Any], ctx: dict[str, Any] | None = None) -> Streamed:
    """Every part of a stream; the run id of its metadata event kept as ``ctx["streamed_run"]``."""
    record = Streamed()
    async for part in parts:
        record.parts.append(part)
        if ctx is not None and part.event == "metadata" and isinstance(part.data, dict):
            ctx["streamed_run"] = part.data.get("run_id")
    return record


def command(resume: Any) -> Any:
    from langgraph_sdk.schema import Command

    return Command(resume=resume)


@call("assistants.search")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    found = await c.assistants.search(graph_id=CREDIT)
    ctx["credit"] = found[0]["assistant_id"]  # each server's own id for the credit graph's assistant
    return found


plain("assistants.count", "assistants.count", graph_id=CREDIT)


plain("assistants.get", "assistants.get", From("credit"))


plain("assistants.get_graph", "assistants.get_graph", From("credit"))


plain("assistants.get_schemas", "assistants.get_schemas", From("credit"))


plain("assistants.get_subgraphs", "assistants.get_subgraphs", From("credit"))


plain("assistants.get_versions", "assistants.get_versions", From("credit"))


@call("assistants.create")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    made = await c.assistants.create(CREDIT, name="differential", metadata={"by": "differential"})
    ctx["assistant"] = made["assistant_id"]
    return made


plain("assistants.update", "assistants.update", From("assistant"), metadata={"by": "differential", "v": 2})


plain("assistants.set_latest", "assistants.set_latest", From("assistant"), 1)


plain("assistants.delete", "assistants.delete", From("assistant"))


@call("threads.create")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    made = await c.threads.create(graph_id=CREDIT)
    ctx["thread"] = made["thread_id"]
    return made


plain("threads.create with metadata", "threads.create", graph_id=CREDIT, metadata={"purpose": "differential"})


plain("threads.get", "threads.get", From("thread"))


plain("threads.update", "threads.update", From("thread"), metadata={"team": "credit"})


plain("threads.search by metadata", "threads.search", metadata={"purpose": "differential"}, limit=5)


plain("threads.count", "threads.count")


@call("runs.stream values+updates to an interrupt", "thread")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    record = await streamed(c.runs.stream(ctx["thread"], CREDIT, input={"application_id": "LN-7310"},
                                          stream_mode=["values", "updates"]), ctx)
    ctx["first_run"] = ctx.pop("streamed_run")
    return record


plain("threads.get_state at the interrupt", "threads.get_state", From("thread"))


@call("threads.get_history", "thread")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    history = await c.threads.get_history(ctx["thread"], limit=3)
    if history and history[-1].get("checkpoint", {}).get("checkpoint_id"):
        ctx["past_checkpoint"] = history[-1]["checkpoint"]["checkpoint_id"]
    return history


plain("threads.get_state at a past checkpoint", "threads.get_state", From("thread"),
      checkpoint_id=From("past_checkpoint"))


plain("threads.search by ids", "threads.search", ids=[From("thread")])


plain("threads.search by values", "threads.search", values={"application_id": "LN-7310"}, limit=5)


plain("threads.search sorted", "threads.search", sort_by="updated_at", sort_order="desc", limit=5)


plain("runs.wait resuming with a Command", "runs.wait", From("thread"), CREDIT, command=command("approved"))


plain("runs.list", "runs.list", From("thread"))


plain("runs.get", "runs.get", From("thread"), From("first_run"))


plain("runs.join", "runs.join", From("thread"), From("first_run"))


@call("runs.join_stream with no stream_mode", "thread", "first_run")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    return await streamed(c.runs.join_stream(ctx["thread"], ctx["first_run"]))


plain("threads.update_state as_node", "threads.update_state", From("thread"), {"notes": ["checked by hand"]},
      as_node="disburse")


plain("threads.copy", "threads.copy", From("thread"))


plain("runs.wait from a past checkpoint (a fork)", "runs.wait", From("thread"), CREDIT, input=None,
      checkpoint_id=From("past_checkpoint"))


@call("runs.stream messages-tuple (tokens)")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CHAT))["thread_id"]
    return await streamed(c.runs.stream(thread, CHAT, stream_mode="messages-tuple", input=QUESTION))


@call("runs.stream events (chat)")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CHAT))["thread_id"]
    return await streamed(c.runs.stream(thread, CHAT, stream_mode="events", input=QUESTION))


@call("runs.stream custom+debug+tasks+checkpoints")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await streamed(c.runs.stream(thread, CREDIT, input={"application_id": "LN-2204"},
                                        stream_mode=["custom", "debug", "tasks", "checkpoints"]))


@call("runs.stream stream_subgraphs")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await streamed(c.runs.stream(thread, CREDIT, input={"application_id": "LN-2204"},
                                        stream_mode="updates", stream_subgraphs=True))


@call("runs.wait with config and metadata")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.wait(thread, CREDIT, input={"application_id": "LN-2204"},
                             config={"configurable": {"user_id": "u-1"}, "recursion_limit": 20,
                                     "tags": ["differential"]}, metadata={"by": "differential"})


@call("runs.wait a node that raises", fails=True)
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.wait(thread, CREDIT, input={"application_id": "LN-0000"})


@call("runs.stream a node that raises")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await streamed(c.runs.stream(thread, CREDIT, input={"application_id": "LN-0000"},
                                        stream_mode="updates"))


@call("runs.wait input of the wrong type", fails=True)
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.wait(thread, CREDIT, input={"application_id": 7310})


@call("runs.wait interrupt_before")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.wait(thread, CREDIT, input={"application_id": "LN-2204"}, interrupt_before=["score"])


@call("runs.wait interrupt_after")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.wait(thread, CREDIT, input={"application_id": "LN-2204"}, interrupt_after=["score"])


@call("runs.create then runs.join")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    run = await c.runs.create(thread, CREDIT, input={"application_id": "LN-2204"})
    ctx["done_thread"], ctx["done_run"] = thread, run["run_id"]
    return await c.runs.join(thread, run["run_id"])


@call("threads.join_stream (thread-level)", "release")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=WAITER))["thread_id"]
    release = Path(ctx["release"]).with_name("thread-stream-release")
    await c.runs.create(thread, WAITER, input={"release_file": str(release)}, stream_mode="updates")
    record = Streamed()

    async def read() -> None:
        async for part in await c.threads.join_stream(thread):  # the run's own modes
            record.parts.append(part)
            if part.event == "updates" and "wait_for_release" in part.data:
                return  # a thread's stream stays open: read to the waiter's update

    reading = asyncio.create_task(read())
    await asyncio.sleep(THREAD_STREAM_SETTLE_SECONDS)  # a thread's stream carries what happens after it opens
    release.touch()
    await reading
    return record


@call("runs.cancel a run in flight", "release")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=WAITER))["thread_id"]
    run = await c.runs.create(thread, WAITER, input={"release_file": ctx["release"]})
    await c.runs.cancel(thread, run["run_id"], wait=True)
    ctx["cancelled_thread"] = thread
    return await c.runs.get(thread, run["run_id"])


plain("threads.get after a cancel", "threads.get", From("cancelled_thread"))


@call("runs.wait after a cancel", "cancelled_thread", "release")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    Path(ctx["release"]).touch()
    return await c.runs.wait(ctx["cancelled_thread"], WAITER, input={"release_file": ctx["release"]})


def double_text(strategy: str) -> Step:
    """A run created on a thread whose first run is still queued, with ``strategy``."""
    async def body(c: Any, ctx: dict[str, Any]) -> Any:
        thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
        await c.runs.create(thread, CREDIT, input={"application_id": "LN-2204"})
        return await c.runs.create(thread, CREDIT, input={"application_id": "LN-2204"},
                                   multitask_strategy=strategy)
    return body


for _strategy in ("interrupt", "rollback"):
    call(f"runs.create multitask_strategy={_strategy}")(double_text(_strategy))


@call("runs.create after_seconds")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    thread = (await c.threads.create(graph_id=CREDIT))["thread_id"]
    return await c.runs.create(thread, CREDIT, input={"application_id": "LN-2204"}, after_seconds=1)


plain("runs.create_batch", "runs.create_batch",
      [{"assistant_id": CREDIT, "input": {"application_id": "LN-2204"}}])


plain("runs.cancel_many", "runs.cancel_many", status="pending")


plain("runs.delete", "runs.delete", From("done_thread"), From("done_run"))


plain("runs.wait stateless", "runs.wait", None, CREDIT, input={"application_id": "LN-2204"})


@call("runs.stream stateless")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    return await streamed(c.runs.stream(None, CREDIT, input={"application_id": "LN-2204"},
                                        stream_mode="values"))


plain("threads.prune", "threads.prune", [From("done_thread")])


plain("threads.delete", "threads.delete", From("thread"))


@call("crons.create")
async def _(c: Any, ctx: dict[str, Any]) -> Any:
    made = await c.crons.create(CREDIT, schedule="0 0 1 1 *", input={"application_id": "LN-2204"})
    ctx["cron"] = made["cron_id"]
    return made


plain("crons.search", "crons.search", assistant_id=From("credit"))


plain("crons.count", "crons.count", assistant_id=From("credit"))


plain("crons.update", "crons.update", From("cron"), schedule="0 0 2 1 *")


plain("crons.delete", "crons.delete", From("cron"))


plain("store.put_item", "store.put_item", ["differential"], key="k", value={"v": 1})


plain("store.get_item", "store.get_item", ["differential"], key="k")


plain("store.search_items", "store.search_items", ["differential"])


plain("store.list_namespaces", "store.list_namespaces")


plain("store.delete_item", "store.delete_item", ["differential"], key="k")
