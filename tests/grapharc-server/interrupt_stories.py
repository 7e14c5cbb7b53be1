"""Interrupt stories any ``grapharc serve`` passes, over a session directory or PostgreSQL (the
tests in test_api_interrupts.py and tests/grapharc-postgres drive them): a plain ``interrupt()``'s
dict shown whole and answered with a dict, breakpoints, and a goto on the trail."""

from __future__ import annotations

import json
from typing import Any

import httpx
from api_graphs import PLAIN, PLAIN_QUESTION, RELAY, STEER
from langgraph_sdk import get_sync_client
from langgraph_sdk.schema import Command


def trail(url: str, thread: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in httpx.get(f"{url}/threads/{thread}/trace").text.splitlines()]


def paused_steer(client: Any) -> str:
    thread = client.threads.create(graph_id=STEER)["thread_id"]
    client.runs.wait(thread, STEER, input={})
    assert client.threads.get_state(thread)["next"] == ["pick"]
    return thread


def a_plain_interrupts_dict_is_shown_whole_and_answered_with_a_dict(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=PLAIN)["thread_id"]
    paused = client.runs.wait(thread, PLAIN, input={})
    assert [i["value"] for i in paused["__interrupt__"]] == [PLAIN_QUESTION]
    state = client.threads.get_state(thread)
    assert [i["value"] for i in state["interrupts"]] == [PLAIN_QUESTION]
    assert [i["value"] for t in state["tasks"] for i in t["interrupts"]] == [PLAIN_QUESTION]
    assert [i["value"] for i in client.threads.get(thread)["interrupts"][""]] == [PLAIN_QUESTION]
    answer = {"choice": "soup", "counts": [1, 2.5], "none": None}
    done = client.runs.wait(thread, PLAIN, command=Command(resume=answer))
    assert done["reply"] == answer and "__interrupt__" not in done
    assert client.threads.get(thread)["status"] == "idle"
    decided = [e["detail"] for e in trail(server, thread) if e["kind"] == "decided"]
    assert [(d["by"], d["answer"]) for d in decided] == [("api", answer)]


def breakpoints_stop_before_and_after_and_a_run_without_input_goes_on(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=RELAY)["thread_id"]
    stopped = client.runs.wait(thread, RELAY, input={"release_file": __file__},
                               interrupt_before=["middle_leg"])
    assert stopped["legs"] == ["first"]
    assert client.threads.get_state(thread)["next"] == ["middle_leg"]
    assert client.threads.get(thread)["status"] == "interrupted"
    after = client.runs.wait(thread, RELAY, input=None, interrupt_after=["middle_leg"])
    assert after["legs"] == ["first", "middle"]
    assert client.threads.get_state(thread)["next"] == ["last_leg"]
    done = client.runs.wait(thread, RELAY, command=Command(resume="go on"))
    assert done["legs"] == ["first", "middle", "last"]
    assert client.threads.get(thread)["status"] == "idle"
    assert client.threads.get_state(thread)["next"] == []


def a_goto_is_applied_and_on_the_trail(server: str) -> None:
    client = get_sync_client(url=server)
    thread = paused_steer(client)
    done = client.runs.wait(thread, STEER, command=Command(resume="left", goto="right"))
    assert (done["picked"], done["went_left"], done["went_right"]) == ("left", True, True)
    directed = [e["detail"] for e in trail(server, thread) if e["kind"] == "directed"]
    assert directed == [{"by": "api", "goto": ["right"], "update": None, "at": ["pick"]}]
