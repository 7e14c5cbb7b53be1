"""Interrupts beyond approvals, through the official ``langgraph-sdk`` client on a real server: a
plain ``interrupt()`` shows its whole value and takes any JSON resume value (one, or LangGraph's
resume map for several), recorded on the trail with who answered."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from api_graphs import PLAIN, PLAIN_PAIR, PLAIN_QUESTION, RELAY, STEER
from interrupt_stories import (
    a_goto_is_applied_and_on_the_trail,
    a_plain_interrupts_dict_is_shown_whole_and_answered_with_a_dict,
    breakpoints_stop_before_and_after_and_a_run_without_input_goes_on,
    paused_steer,
    trail,
)
from langgraph_sdk import get_sync_client
from langgraph_sdk.schema import Command
from server_process import api_server_url

server = api_server_url("interrupts")


def test_a_plain_interrupt_shows_its_whole_value_and_its_node_gets_a_dict_answer(server: str) -> None:
    a_plain_interrupts_dict_is_shown_whole_and_answered_with_a_dict(server)


def test_the_stream_shows_a_plain_interrupts_whole_value(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=PLAIN)["thread_id"]
    parts = list(client.runs.stream(thread, PLAIN, input={}, stream_mode="updates"))
    asked = [p.data["__interrupt__"] for p in parts if p.event == "updates" and "__interrupt__" in p.data]
    assert [[i["value"] for i in a] for a in asked] == [[PLAIN_QUESTION]]
    assert client.runs.wait(thread, PLAIN, command=Command(resume=[3, "x"]))["reply"] == [3, "x"]


def test_a_resume_map_answers_several_plain_interrupts_by_id(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=PLAIN_PAIR)["thread_id"]
    client.runs.wait(thread, PLAIN_PAIR, input={})
    state = client.threads.get_state(thread)
    asked = {t["name"]: t["interrupts"][0] for t in state["tasks"]}
    assert {name: i["value"] for name, i in asked.items()} == {"ask_left": ["left?", 1], "ask_right": 7}
    assert sorted(map(json.dumps, (i["value"] for i in state["interrupts"]))) == ["7", '["left?", 1]']
    with pytest.raises(httpx.HTTPStatusError, match="409 Conflict"):  # one value for two interrupts
        client.runs.wait(thread, PLAIN_PAIR, command=Command(resume="both?"))
    done = client.runs.wait(thread, PLAIN_PAIR, command=Command(resume={
        asked["ask_left"]["id"]: {"went": "left"}, asked["ask_right"]["id"]: 0}))
    assert (done["left"], done["right"]) == ({"went": "left"}, 0)
    assert client.threads.get(thread)["status"] == "idle"


def test_an_approval_still_takes_only_a_decision(server: str) -> None:
    from sdk_stories import CREDIT

    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=CREDIT)["thread_id"]
    paused = client.runs.wait(thread, CREDIT, input={"application_id": "LN-7310"})
    assert isinstance(paused["__interrupt__"][0]["value"], str)  # the approval's question
    refused = httpx.post(f"{server}/threads/{thread}/runs/wait",
                         json={"assistant_id": CREDIT, "command": {"resume": {"go": True}}})
    assert refused.status_code == 422 and "asks for a decision" in refused.json()["detail"]
    assert client.threads.get(thread)["status"] == "interrupted"


def test_breakpoints_stop_a_run_before_and_after_nodes_and_a_run_without_input_goes_on(server: str) -> None:
    breakpoints_stop_before_and_after_and_a_run_without_input_goes_on(server)


def test_every_node_is_a_breakpoint_with_a_star_and_an_unknown_node_is_refused(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=RELAY)["thread_id"]
    refused = httpx.post(f"{server}/threads/{thread}/runs/wait",
                         json={"assistant_id": RELAY, "input": {}, "interrupt_after": ["first_leg", "nope"]})
    assert refused.status_code == 422 and "nope" in refused.json()["detail"]
    assert client.threads.get(thread)["metadata"]["grapharc_status"] == "created"
    client.runs.wait(thread, RELAY, input={"release_file": __file__}, interrupt_before="*")
    assert client.threads.get_state(thread)["next"] == ["first_leg"]
    assert client.runs.wait(thread, RELAY, input=None, interrupt_before="*")["legs"] == ["first"]
    assert client.threads.get_state(thread)["next"] == ["middle_leg"]


def test_with_an_auth_file_the_caller_who_runs_the_graph_answers_a_plain_interrupt(
        api_server_with_auth: str) -> None:
    from inbox_setup import TOKEN

    client = get_sync_client(url=api_server_with_auth, headers={"Authorization": f"Bearer {TOKEN}"})
    thread = client.threads.create(graph_id=PLAIN)["thread_id"]
    client.runs.wait(thread, PLAIN, input={})
    assert client.runs.wait(thread, PLAIN, command=Command(resume={"ok": 1}))["reply"] == {"ok": 1}
    trace = httpx.get(f"{api_server_with_auth}/threads/{thread}/trace",
                      headers={"Authorization": f"Bearer {TOKEN}"}).text.splitlines()
    decided = [json.loads(line)["detail"] for line in trace if json.loads(line)["kind"] == "decided"]
    assert [(d["by"], d["answer"]) for d in decided] == [("alice", {"ok": 1})]


def refused(url: str, thread: str, command: dict[str, Any], status: int) -> str:
    answer = httpx.post(f"{url}/threads/{thread}/runs/wait", json={"assistant_id": STEER, "command": command})
    assert answer.status_code == status, answer.text
    return str(answer.json()["detail"])


def test_a_goto_to_a_node_the_routing_leads_to_runs_it_and_is_on_the_trail(server: str) -> None:
    a_goto_is_applied_and_on_the_trail(server)


def test_a_goto_the_routing_does_not_lead_to_is_refused_and_nothing_is_stored(server: str) -> None:
    client = get_sync_client(url=server)
    thread = paused_steer(client)
    before = trail(server, thread)
    for target in ("pick", "nowhere"):
        detail = refused(server, thread, {"resume": "left", "goto": target}, 409)
        assert f"goto '{target}'" in detail and "routing" in detail and "left, right" in detail
    assert trail(server, thread) == before
    assert client.threads.get(thread)["status"] == "interrupted"


def test_an_update_within_the_nodes_declared_writes_reaches_the_state(server: str) -> None:
    client = get_sync_client(url=server)
    thread = paused_steer(client)
    done = client.runs.wait(thread, STEER, command=Command(resume="right", update={"note": "by client"}))
    assert (done["note"], done["went_right"], done.get("went_left", False)) == ("by client", True, False)
    directed = [e["detail"] for e in trail(server, thread) if e["kind"] == "directed"]
    assert directed == [{"by": "api", "goto": [], "update": {"note": "by client"}, "at": ["pick"]}]


def test_an_update_outside_the_nodes_declared_writes_or_types_is_refused(server: str) -> None:
    client = get_sync_client(url=server)
    thread = paused_steer(client)
    before = trail(server, thread)
    assert "went_left" in refused(server, thread, {"resume": "left", "update": {"went_left": True}}, 422)
    assert "note" in refused(server, thread, {"resume": "left", "update": {"note": 5}}, 422)
    assert "colour" in refused(server, thread, {"resume": "left", "update": {"colour": "red"}}, 422)
    assert "command needs" in refused(server, thread, {}, 422)
    assert trail(server, thread) == before
    assert client.threads.get(thread)["status"] == "interrupted"
