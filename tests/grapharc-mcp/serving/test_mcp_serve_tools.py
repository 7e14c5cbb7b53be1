"""``grapharc mcp serve`` driven by the ``mcp`` SDK's own client, over stdio (the client spawns the
server) and over streamable HTTP (a real server process on 127.0.0.1): the tools listed, a run to
completion, a run paused on an approval that a person decides with ``grapharc session approve`` in
another process, and bad input answered as tool errors by a server that carries on."""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_serve_graphs import (
    COUNTER,
    COUNTER_BUDGET,
    CREDIT_GRAPH,
    NEEDS_SIGN_OFF,
    TRACE_VARIABLE,
    WITHIN_LIMIT,
)
from mcp_serve_process import environment, grapharc, http_server, run, serve_command

from grapharc.examples.approval import CREDIT_DESK, CreditState

READERS = {"thread_status", "pending_approvals"}


@dataclass
class Served:
    """One ``grapharc mcp serve`` over ``sessions``: spawned by each stdio client, or already
    listening at ``url``; the stdio server's stderr goes to ``errlog``."""

    sessions: Path
    errlog: Path
    url: str | None = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        """An initialized client session with the server."""
        if self.url is not None:
            async with streamable_http_client(self.url) as (read, write), \
                    ClientSession(read, write) as client:
                await client.initialize()
                yield client
            return
        command = serve_command(self.sessions)
        parameters = StdioServerParameters(command=command[0], args=command[1:], env=environment())
        with self.errlog.open("a") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as client:
                await client.initialize()
                yield client

    def drive(self, story: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        """Run ``story`` with a client session of its own; what it returns."""
        async def connected() -> Any:
            async with self.session() as client:
                return await story(client)

        return anyio.run(connected)


@pytest.fixture(scope="module")
def http_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One HTTP server for the module's tests (each reads only the threads it started), its
    counter tracing to its own folder; it must stop cleanly on SIGTERM."""
    folder = tmp_path_factory.mktemp("http-served")
    sessions, errlog = folder / "sessions", folder / "server-stderr.txt"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TRACE_VARIABLE, str(folder / "trace.jsonl"))
        server = http_server(serve_command(sessions, "--http", "127.0.0.1:0", "--json"))
    with server:
        yield Served(sessions, errlog, url=server.json_announcement()["url"])
        server.process.send_signal(signal.SIGTERM)
        assert server.wait() == 0, server.stderr
    assert "Traceback" not in server.stderr


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """The server under test, over each transport: a stdio one spawned by each client, its
    counter tracing to ``tmp_path``, or the module's HTTP server."""
    if request.param == "http":
        yield request.getfixturevalue("http_served")
        return
    sessions, errlog = tmp_path / "sessions", tmp_path / "server-stderr.txt"
    monkeypatch.setenv(TRACE_VARIABLE, str(tmp_path / "trace.jsonl"))
    yield Served(sessions, errlog)
    assert "Traceback" not in (errlog.read_text() if errlog.exists() else "")


def traced(served: Served) -> Path:
    """The trace file the server's counter writes to."""
    return served.sessions.parent / "trace.jsonl"


def session_ids(served: Served) -> set[str]:
    """The threads ``grapharc session list`` shows under the server's sessions."""
    listed = run(grapharc("session", "list", "--sessions", str(served.sessions), "--json"))
    assert listed.returncode == 0, listed.stderr
    return {session["thread_id"] for session in json.loads(listed.stdout)["sessions"]}


def document(result: types.CallToolResult) -> dict[str, Any]:
    """A successful call's document, which its text content carries too."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert isinstance(text, types.TextContent) and json.loads(text.text) == result.structured_content
    return result.structured_content


def refusal(result: types.CallToolResult) -> str:
    """A tool error's text, which must be GraphARC's message, not a traceback."""
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent) and "Traceback" not in text.text
    return text.text


def test_a_tool_per_graph_with_its_state_schema_and_the_readers(served: Served) -> None:
    async def story(client: ClientSession) -> list[types.Tool]:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in served.drive(story)}
    assert set(tools) == {CREDIT_GRAPH, COUNTER, *READERS}  # and no tool decides an approval
    assert tools[CREDIT_GRAPH].input_schema == CreditState.model_json_schema()
    assert tools["thread_status"].input_schema["required"] == ["thread_id"]
    for tool in tools.values():
        assert tool.description is not None and "grapharc session approve" in tool.description
        assert "not an MCP tool" in tool.description
    readers = [tools[name].annotations for name in sorted(READERS)]
    assert all(hints is not None and hints.read_only_hint for hints in readers)


def test_a_run_within_the_limit_completes_with_its_values(served: Served) -> None:
    async def story(client: ClientSession) -> types.CallToolResult:
        return await client.call_tool(CREDIT_GRAPH, {"application_id": WITHIN_LIMIT})

    done = document(served.drive(story))
    assert done["graph"] == CREDIT_GRAPH and done["thread_id"]
    assert (done["status"], done["outcome"], done["pending"]) == ("completed", "released", [])
    assert done["values"]["released"] is True and done["values"]["application_id"] == WITHIN_LIMIT


def test_a_paused_run_is_approved_from_another_process_and_read_after(served: Served) -> None:
    async def story(client: ClientSession) -> tuple[Any, ...]:
        paused = document(await client.call_tool(CREDIT_GRAPH, {"application_id": NEEDS_SIGN_OFF}))
        thread = paused["thread_id"]
        listed = document(await client.call_tool("pending_approvals", {}))["pending"]
        only = document(await client.call_tool("pending_approvals", {"thread_id": thread}))["pending"]
        approve = await anyio.to_thread.run_sync(run, grapharc(
            "session", "approve", thread, "--sessions", str(served.sessions), "--decider", CREDIT_DESK,
            "--json"))
        after = document(await client.call_tool("thread_status", {"thread_id": thread}))
        left = document(await client.call_tool("pending_approvals", {}))["pending"]
        return paused, listed, only, approve, after, left

    paused, listed, only, approve, after, left = served.drive(story)
    assert paused["status"] == "paused" and paused["values"]["within_policy"] is True
    assert not paused["values"].get("released")  # not paid out before the decision
    [asked] = paused["pending"]
    assert asked["node"] == "sign_off" and asked["deciders"] == [CREDIT_DESK]
    assert asked["question"].startswith("release EUR 24,000.00 to Rosalind Achterberg")
    assert asked["arguments"] == asked["question"]  # what the interrupt carries
    assert asked["decide_with"].startswith(f"grapharc session approve {paused['thread_id']}")
    assert listed == only == [asked]
    assert approve.returncode == 0, approve.stderr
    assert json.loads(approve.stdout)["status"] == "completed"
    assert (after["status"], after["outcome"], after["pending"]) == ("completed", "released", [])
    assert after["values"]["released"] is True and after["values"]["answer"] == "approved"
    assert left == []


def test_a_thread_paused_under_one_connection_is_read_after_its_approval_by_the_next(served: Served) -> None:
    """Nothing waits in the server between the pause and the answer: a stdio server ends with its
    connection, and the next one (another process) reads the thread the approval carried on."""
    async def start(client: ClientSession) -> dict[str, Any]:
        return document(await client.call_tool(CREDIT_GRAPH, {"application_id": NEEDS_SIGN_OFF}))

    thread = served.drive(start)["thread_id"]
    approve = run(grapharc("session", "approve", thread, "--sessions", str(served.sessions),
                           "--decider", CREDIT_DESK))
    assert approve.returncode == 0, approve.stderr

    async def read(client: ClientSession) -> dict[str, Any]:
        return document(await client.call_tool("thread_status", {"thread_id": thread}))

    after = served.drive(read)
    assert (after["status"], after["outcome"]) == ("completed", "released")
    assert after["values"]["answer"] == "approved"


def test_bad_input_is_a_tool_error_naming_it_and_writes_nothing(served: Served) -> None:
    async def story(client: ClientSession) -> tuple[list[str], dict[str, Any]]:
        texts = [refusal(await client.call_tool(name, arguments)) for name, arguments in (
            ("no-such-graph", {}),
            (CREDIT_GRAPH, {"amount": "lots"}),
            (CREDIT_GRAPH, {"applicant_name": "Ada"}),
            ("thread_status", {"thread_id": "no-such-thread"}),
            ("thread_status", {}),
            ("pending_approvals", {"thread_id": "no-such-thread"}),
        )]
        return texts, document(await client.call_tool("pending_approvals", {}))

    before = session_ids(served)
    texts, pending = served.drive(story)
    unknown_tool, wrong_type, unknown_field, unknown_thread, no_thread, unknown_pending = texts
    assert "no tool 'no-such-graph'" in unknown_tool and CREDIT_GRAPH in unknown_tool
    assert "'amount'" in wrong_type and "expected int" in wrong_type
    assert "no field 'applicant_name'" in unknown_field
    assert "no-such-thread" in unknown_thread and "no-such-thread" in unknown_pending
    assert "thread_id" in no_thread and "Field required" in no_thread
    assert pending == {"pending": []}  # the server carried on and answers
    assert session_ids(served) == before  # no run was started



def test_runs_are_governed_by_the_graph_s_budget_and_traced(served: Served) -> None:
    async def story(client: ClientSession) -> list[types.CallToolResult]:
        return [await client.call_tool(COUNTER, arguments) for arguments in (
            {"goal": 3}, {"goal": COUNTER_BUDGET + 10}, {"goal": 1, "failing": True})]

    within, over, jammed = served.drive(story)
    counted = document(within)
    assert (counted["status"], counted["values"]["count"]) == ("completed", 3)
    for failed, error in ((over, f"iterations budget exceeded (node 'count'): {COUNTER_BUDGET} used of a "
                                 f"limit of {COUNTER_BUDGET}"), (jammed, "the counter is jammed")):
        assert failed.is_error  # the run did not do what was asked: its thread says why
        ended = failed.structured_content
        assert isinstance(ended, dict) and ended["status"] == "failed" and error in ended["error"]
    threads = [counted["thread_id"], over.structured_content["thread_id"],
               jammed.structured_content["thread_id"]]
    events = [json.loads(line) for line in traced(served).read_text().splitlines()]
    starts = [event for event in events if event["phase"] == "run_start" and event["thread_id"] in threads]
    assert sorted(event["thread_id"] for event in starts) == sorted(threads)  # one start each
    assert [event["budget"]["max_iterations"] for event in starts] == [COUNTER_BUDGET] * 3
