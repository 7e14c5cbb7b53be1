"""What a LangGraph client does with assistants, as stories any async client drives (one
``get_client``, or ``Alternating`` between the workers of one database): create assistants of a
graph that declares config and context, run them (thread, stream, stateless) with their config
beneath the run's, version them, choose the version runs use, delete them, and the bad input that
is refused with nothing stored. The server registers api_graphs.py's and config_graphs.py's
graphs and runs under ``--max-iterations CEILING``."""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import httpx
from config_graphs import CONFIGURED, CONFIGURED_RELAY

CEILING = 20
ADA = {"configurable": {"user_id": "ada", "model": "mock/careful"}, "tags": ["blue"]}
SUPERSTEPS = CEILING + 2  # LangGraph's recursion limit under the iteration ceiling


async def refused(call: Awaitable[Any]) -> httpx.Response:
    """The answer of a call the server refuses (the SDK raises httpx's error or its own subclass)."""
    try:
        await call
    except httpx.HTTPStatusError as error:
        return error.response
    raise AssertionError("the call was accepted")


async def create_read_search_and_count(client: Any) -> None:
    """A created assistant reads back as made, and search and count find it by graph, name (a part,
    in any case) and metadata beside the graph's own assistant."""
    made = await client.assistants.create(CONFIGURED, config=ADA, context={"tone": "formal"},
                                          metadata={"team": "desk", "story": "search"}, name="Ada's Desk",
                                          description="careful answers for ada")
    assert made["graph_id"] == CONFIGURED and made["version"] == 1 and made["name"] == "Ada's Desk"
    assert (made["config"], made["context"], made["metadata"]) == (
        ADA, {"tone": "formal"}, {"team": "desk", "story": "search"})
    assert await client.assistants.get(made["assistant_id"]) == made
    mine = await client.assistants.search(graph_id=CONFIGURED, metadata={"story": "search"})
    assert [a["assistant_id"] for a in mine] == [made["assistant_id"]]
    named = await client.assistants.search(name="ada's", graph_id=CONFIGURED)
    assert made["assistant_id"] in [a["assistant_id"] for a in named]
    listed = await client.assistants.search(graph_id=CONFIGURED, limit=100)
    assert CONFIGURED in [a["assistant_id"] for a in listed]  # the graph's own, beside those created
    assert await client.assistants.count(graph_id=CONFIGURED) == len(listed)
    assert await client.assistants.count(metadata={"story": "search"}) == 1
    schemas = await client.assistants.get_schemas(made["assistant_id"])
    assert schemas["graph_id"] == CONFIGURED and schemas["context_schema"] is not None


async def runs_start_from_the_assistants_config(client: Any) -> None:
    """A thread's run, a stream and a stateless run of a created assistant run its graph with its
    config and context; the run's own keys override them key by key; the run names the assistant."""
    made = await client.assistants.create(CONFIGURED, config=ADA, context={"tone": "formal"})
    assistant = made["assistant_id"]
    thread = (await client.threads.create(graph_id=CONFIGURED))["thread_id"]
    first = await client.runs.wait(thread, assistant, input={})
    assert first["heard"] == [f"ada|mock/careful|formal|blue|{SUPERSTEPS}"]
    second = await client.runs.wait(thread, assistant, input={}, context={"tone": "plain"},
                                    config={"configurable": {"user_id": "bo"}, "recursion_limit": 7})
    assert second["heard"][-1] == "bo|mock/careful|plain|blue|7"
    assert {run["assistant_id"] for run in await client.runs.list(thread)} == {assistant}
    values = [part.data async for part in client.runs.stream(None, assistant, input={}, stream_mode="values")
              if part.event == "values"]
    assert values[-1]["heard"] == [f"ada|mock/careful|formal|blue|{SUPERSTEPS}"]
    background = await client.runs.create(None, assistant, input={}, on_completion="keep")
    assert background["assistant_id"] == assistant
    await client.runs.join(background["thread_id"], background["run_id"])
    assert (await client.runs.get(background["thread_id"], background["run_id"]))["status"] == "success"


async def version_and_choose_the_version_runs_use(client: Any) -> None:
    """An update adds a version runs use at once (metadata merged, what it leaves out kept);
    get_versions lists them newest first, by metadata too; set_latest goes back to one."""
    assistant = (await client.assistants.create(CONFIGURED, config=ADA, metadata={"stage": "one"},
                                                name="versions"))["assistant_id"]
    updated = await client.assistants.update(assistant, config={"configurable": {"user_id": "cy"}},
                                             metadata={"reviewed": True})
    assert (updated["version"], updated["name"], updated["metadata"]) == (
        2, "versions", {"stage": "one", "reviewed": True})
    thread = (await client.threads.create(graph_id=CONFIGURED))["thread_id"]
    assert (await client.runs.wait(thread, assistant, input={}))["heard"][-1].startswith("cy|mock/echo|")
    versions = await client.assistants.get_versions(assistant)
    assert [v["version"] for v in versions] == [2, 1]
    reviewed = await client.assistants.get_versions(assistant, metadata={"reviewed": True})
    assert [v["version"] for v in reviewed] == [2]
    back = await client.assistants.set_latest(assistant, 1)
    assert (back["version"], back["config"]) == (1, ADA)
    assert (await client.runs.wait(thread, assistant, input={}))["heard"][-1].startswith("ada|mock/careful|")
    assert (await refused(client.assistants.set_latest(assistant, 9))).status_code == 404


async def delete_waits_for_its_runs(client: Any, release: Path) -> None:
    """An assistant with a run in flight is not deleted (409 naming the run); once the run has
    ended it is, and its id names nothing any more."""
    assistant = (await client.assistants.create(CONFIGURED_RELAY))["assistant_id"]
    run = await client.runs.create(None, assistant, input={"release_file": str(release)},
                                   on_completion="keep")
    busy = await refused(client.assistants.delete(assistant))
    assert busy.status_code == 409 and run["run_id"] in busy.json()["detail"]
    release.write_text("go")
    await client.runs.join(run["thread_id"], run["run_id"])
    await client.assistants.delete(assistant)
    assert (await refused(client.assistants.get(assistant))).status_code == 404
    assert (await refused(client.runs.wait(None, assistant, input={}))).status_code == 404
    assert (await client.runs.get(run["thread_id"], run["run_id"]))["assistant_id"] == assistant


async def a_graphs_own_assistant_is_read_only(client: Any) -> None:
    """A registered graph's own assistant is the operator's: changing it is refused saying why."""
    for call in (client.assistants.update(CONFIGURED, metadata={"x": 1}),
                 client.assistants.delete(CONFIGURED), client.assistants.set_latest(CONFIGURED, 1)):
        answer = await refused(call)
        assert answer.status_code == 409 and "registered by the operator" in answer.json()["detail"]
    assert [v["version"] for v in await client.assistants.get_versions(CONFIGURED)] == [1]


def _nested(depth: int) -> Any:
    """An object ``depth`` levels deep."""
    value: Any = "bottom"
    for _ in range(depth):
        value = {"down": value}
    return value


BAD_CREATES: list[tuple[dict[str, Any], int, str]] = [
    ({"graph_id": "nowhere"}, 404, "nowhere"),
    ({"graph_id": CONFIGURED, "config": {"configurable": {"temperature": 2}}}, 422, "temperature"),
    ({"graph_id": CONFIGURED, "config": {"configurable": {"thread_id": "t"}}}, 422, "thread_id"),
    ({"graph_id": CONFIGURED, "config": {"configurable": {"model": "gpt-9"}}}, 422, "model"),
    ({"graph_id": CONFIGURED, "config": {"recursion_limit": CEILING + 1}}, 422, "recursion_limit"),
    ({"graph_id": CONFIGURED, "context": {"tone": "shouty"}}, 422, "context.tone"),
    ({"graph_id": "waiter", "context": {"tone": "formal"}}, 422, "context"),
    ({"graph_id": CONFIGURED, "config": "careful"}, 422, "config"),
    ({"graph_id": CONFIGURED, "budget": {"max_iterations": 5}}, 422, "budget"),
    ({"graph_id": CONFIGURED, "assistant_id": "my-assistant"}, 422, "UUID"),
    ({"graph_id": CONFIGURED, "metadata": {"blob": "x" * 70_000}}, 422, "metadata"),
    ({"graph_id": CONFIGURED, "metadata": {"deep": _nested(40)}}, 422, ""),
    ({"graph_id": CONFIGURED, "name": ""}, 422, "name"),
]
"""Bodies of POST /assistants that are refused: the status and a word the problem names."""


async def bad_input_is_refused_naming_it_and_nothing_is_stored(client: Any, url: str) -> None:
    """Every bad create is refused with the status and a problem naming what is wrong, and leaves
    no assistant behind; a taken id is 409, or the one there with if_exists do_nothing."""
    before = await client.assistants.count()
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for body, status, named in BAD_CREATES:
            answer = await http.post("/assistants", json=body)
            assert answer.status_code == status, (body, answer.text)
            assert answer.headers["content-type"] == "application/problem+json"
            assert named in answer.text, (body, answer.text)
        malformed = await http.post("/assistants", content=b"{not json",
                                    headers={"content-type": "application/json"})
        assert malformed.status_code == 422
    assert await client.assistants.count() == before
    made = await client.assistants.create(CONFIGURED, name="first")
    taken = await refused(client.assistants.create(CONFIGURED, assistant_id=made["assistant_id"]))
    assert taken.status_code == 409
    again = await client.assistants.create(CONFIGURED, assistant_id=made["assistant_id"],
                                           if_exists="do_nothing", name="second")
    assert again == made
    bad_update = await refused(client.assistants.update(made["assistant_id"],
                                                        config={"configurable": {"colour": "red"}}))
    assert bad_update.status_code == 422 and "colour" in bad_update.text
    assert [v["version"] for v in await client.assistants.get_versions(made["assistant_id"])] == [1]


async def all_stories(client: Any, url: str, release: Path) -> None:
    """Every story above, in turn."""
    await create_read_search_and_count(client)
    await runs_start_from_the_assistants_config(client)
    await version_and_choose_the_version_runs_use(client)
    await delete_waits_for_its_runs(client, release)
    await a_graphs_own_assistant_is_read_only(client)
    await bad_input_is_refused_naming_it_and_nothing_is_stored(client, url)
