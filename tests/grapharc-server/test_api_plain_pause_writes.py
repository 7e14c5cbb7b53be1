"""State writes on a thread paused on a plain ``interrupt()``, through the official
``langgraph-sdk`` on a real server: ``threads.update_state`` is a checked write there as on an idle
thread (the thread stays paused on the same question, which its answer still resumes) and
``threads.copy`` carries the pending interrupt to the copy, which is answered on its own; a thread a
breakpoint stopped is edited too, and the next run carries it on. A thread
paused on an approval keeps refusing both (409 naming the approval): a decision is a durable record
that a write from outside must not go around."""

from __future__ import annotations

import httpx
from api_graphs import PLAIN, PLAIN_QUESTION, RELAY
from interrupt_stories import trail
from langgraph_sdk import get_sync_client
from langgraph_sdk.schema import Command
from server_process import api_server_url

CREDIT = "credit-approval"


server = api_server_url("plain-writes")


def _paused_plain(client: object) -> str:
    thread = client.threads.create(graph_id=PLAIN)["thread_id"]  # type: ignore[attr-defined]
    client.runs.wait(thread, PLAIN, input={})  # type: ignore[attr-defined]
    return str(thread)


def test_update_state_on_a_thread_paused_on_a_plain_interrupt_is_a_checked_write_and_it_stays_paused(
        server: str) -> None:
    client = get_sync_client(url=server)
    thread = _paused_plain(client)
    written = client.threads.update_state(thread, {"left": "noted"})  # as the input, which wrote last
    assert written["checkpoint"]["checkpoint_id"] == client.threads.get_state(thread)["checkpoint_id"]
    paused = client.threads.get(thread)
    assert paused["status"] == "interrupted"
    assert [i["value"] for i in paused["interrupts"][""]] == [PLAIN_QUESTION]
    assert client.threads.get_state(thread)["values"]["left"] == "noted"
    updated = [e["detail"] for e in trail(server, thread) if e["kind"] == "updated"]
    assert [(u["by"], u["as_node"], u["fields"]) for u in updated] == [("api", "__start__", ["left"])]
    refused = httpx.post(f"{server}/threads/{thread}/state",
                         json={"values": {"left": 5}, "as_node": "ask_plainly"})
    assert refused.status_code == 422 and "left" in refused.json()["detail"]  # not ask_plainly's write

    done = client.runs.wait(thread, PLAIN, command=Command(resume="soup"))
    assert (done["reply"], done["left"]) == ("soup", "noted")
    assert client.threads.get(thread)["status"] == "idle"


def test_a_copy_of_a_thread_paused_on_a_plain_interrupt_carries_the_interrupt(server: str) -> None:
    client = get_sync_client(url=server)
    source = _paused_plain(client)
    copy = client.threads.copy(source)
    assert copy["status"] == "interrupted"
    assert [i["value"] for i in client.threads.get(copy["thread_id"])["interrupts"][""]] == [PLAIN_QUESTION]
    assert [i["value"] for i in client.threads.get_state(copy["thread_id"])["interrupts"]] == [PLAIN_QUESTION]

    done = client.runs.wait(copy["thread_id"], PLAIN, command=Command(resume={"copy": True}))
    assert done["reply"] == {"copy": True}
    assert client.threads.get(source)["status"] == "interrupted"  # the source still waits on its own
    assert client.runs.wait(source, PLAIN, command=Command(resume="source"))["reply"] == "source"


def test_a_thread_paused_on_an_approval_refuses_update_state_and_copy_naming_the_approval(
        server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=CREDIT)["thread_id"]
    client.runs.wait(thread, CREDIT, input={"application_id": "LN-7310"})
    approval = client.threads.get_state(thread)["interrupts"][0]["id"]
    for answer in (httpx.post(f"{server}/threads/{thread}/state", json={"values": {}}),
                   httpx.post(f"{server}/threads/{thread}/copy")):
        assert answer.status_code == 409, answer.text
        assert approval in answer.json()["detail"] and "decision" in answer.json()["detail"]
    assert client.threads.get(thread)["status"] == "interrupted"


def test_update_state_on_a_thread_a_breakpoint_stopped_is_carried_on_by_the_next_run(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create(graph_id=RELAY)["thread_id"]
    client.runs.wait(thread, RELAY, input={"release_file": __file__}, interrupt_before=["middle_leg"])
    client.threads.update_state(thread, {"legs": ["edited"]}, as_node="first_leg")
    assert client.threads.get(thread)["status"] == "interrupted"
    assert client.threads.get_state(thread)["next"] == ["middle_leg"]
    assert client.runs.wait(thread, RELAY, input=None)["legs"] == ["edited", "middle", "last"]


def test_search_create_and_copy_show_a_plain_interrupts_whole_value_as_get_does(server: str) -> None:
    client = get_sync_client(url=server)
    thread = _paused_plain(client)
    shown = client.threads.get(thread)["interrupts"]
    assert [i["value"] for i in shown[""]] == [PLAIN_QUESTION]
    [found] = client.threads.search(ids=[thread])
    again = client.threads.create(thread_id=thread, graph_id=PLAIN, if_exists="do_nothing")
    assert found["interrupts"] == again["interrupts"] == shown  # the dict itself, not its JSON text
    copied = client.threads.copy(thread)
    assert [i["value"] for i in copied["interrupts"][""]] == [PLAIN_QUESTION]
