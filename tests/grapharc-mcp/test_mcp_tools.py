"""An MCP server's tools in the agent's registry, over stdio and streamable HTTP: named NAME.tool,
shown with the server's schema, validated before the call, governed and traced like any tool."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from mcp_agents import agent_for, call, close_sources, of_phase, policy_rules, reply, run, told
from mcp_setup import stdio_entry

from grapharc.harness.tools import SideEffect
from grapharc.trace import schema as ts

ALLOW_NOTES = policy_rules(("notes-read", "notes.*", "allow"))


@pytest.fixture(params=["stdio", "http"])
def notes_entry(request: pytest.FixtureRequest, http_server: Any) -> dict[str, Any]:
    """The notes server's config entry, over each transport."""
    if request.param == "stdio":
        return stdio_entry("notes")
    return {"url": http_server("notes").url}


def test_each_tool_is_registered_as_server_dot_tool_with_the_servers_schema_and_annotations(
        tmp_path, notes_entry):
    agent, model = agent_for(tmp_path, {"notes": notes_entry}, ALLOW_NOTES, ["done"])
    try:
        run(agent, tmp_path)
    finally:
        close_sources(agent)
    names = agent.tools.names()
    assert names == ["notes.add_note", "notes.echo", "notes.notes", "notes.size", "notes.whoami"]
    assert model.offered == [["notes__add_note", "notes__echo", "notes__notes", "notes__size",
                              "notes__whoami"]]
    echo = agent.tools.get("notes.echo")
    assert echo.schema()["function"]["parameters"]["properties"] == {"text": {"title": "Text",
                                                                              "type": "string"}}
    assert (echo.side_effect, echo.idempotent) == (SideEffect.READ, True)
    add = agent.tools.get("notes.add_note")
    assert (add.side_effect, add.idempotent) == (SideEffect.EXEC, False)


def test_a_call_runs_on_the_server_and_the_trace_names_server_tool_digest_size_and_executor(
        tmp_path, notes_entry):
    script = [reply(call("notes__echo", {"text": "hello"})), "done"]
    agent, _ = agent_for(tmp_path, {"notes": notes_entry}, ALLOW_NOTES, script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert told(out) == ["hello"]
    [event] = of_phase(events, "tool")
    assert (event["tool"], event["server"], event["executor"], event["outcome"]) == (
        "notes.echo", "notes", "mcp", "ok")
    assert event["output_chars"] == 5 and len(event["args_digest"]) == 64 and event["duration_ms"] > 0
    [permission] = of_phase(events, "permission")
    assert (permission["tool"], permission["decision"], permission["rule_id"]) == (
        "notes.echo", "allow", "notes-read")
    validator = jsonschema.Draft202012Validator(ts.json_schema())
    assert all(not list(validator.iter_errors(event)) for event in events)


def test_arguments_that_do_not_fit_the_schema_are_refused_before_the_server_sees_them(tmp_path):
    script = [reply(call("notes__add_note", {"text": 42})), reply(call("notes__notes", {}, 2)), "done"]
    agent, _ = agent_for(tmp_path, {"notes": stdio_entry("notes")}, ALLOW_NOTES, script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    refused, notes = told(out)
    assert refused == "error: tool 'notes.add_note': text: 42 is not of type 'string'"
    assert notes == ""  # the server's notebook is empty: the bad call never reached it
    assert [e["outcome"] for e in of_phase(events, "tool")] == ["refused", "ok"]


def test_a_side_effecting_tool_gets_an_idempotency_key_and_an_operator_override_is_obeyed(tmp_path):
    entry = stdio_entry("notes", side_effects={"echo": "side_effecting", "add_note": "read_only"})
    agent, _ = agent_for(tmp_path, {"notes": entry}, ALLOW_NOTES, ["done"])
    close_sources(agent)
    echo, add = agent.tools.get("notes.echo"), agent.tools.get("notes.add_note")
    assert (echo.side_effect, echo.idempotent) == (SideEffect.EXEC, False)
    assert (add.side_effect, add.idempotent) == (SideEffect.READ, True)


def test_an_ask_is_put_to_the_approver_with_the_exact_arguments(tmp_path):
    asked: list[Any] = []

    def approver(request: Any) -> bool:
        asked.append(request)
        return False

    policy = policy_rules(("notes-write", "notes.add_note", "ask"), ("notes-read", "notes.*", "allow"))
    script = [reply(call("notes__add_note", {"text": "milk"})), reply(call("notes__notes", {}, 2)), "done"]
    agent, _ = agent_for(tmp_path, {"notes": stdio_entry("notes")}, policy, script)
    agent.approver = approver
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    [request] = asked
    assert (request.subject, request.rule_id, request.arguments) == ("notes.add_note", "notes-write",
                                                                     {"text": "milk"})
    assert told(out)[1] == ""  # declined: the note was never added
    assert json.dumps(of_phase(events, "permission")[0]["approval"]) == '"refused"'
