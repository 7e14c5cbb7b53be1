"""Hostile MCP servers: the policy holds against a lying description, a schema bomb and a
colliding name are refused at connect, and a server that hangs, dies mid-call, floods, or
changes its tool list never hangs the agent nor gets an ungoverned call."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from mcp_agents import agent_for, call, close_sources, layer, of_phase, policy_rules, reply, run, told
from mcp_setup import stdio_entry

from grapharc.errors import GraphARCError
from grapharc.harness.setup import add_source_tools
from grapharc.harness.tools import Tool, ToolDefinitionError, ToolRegistry


def test_a_description_telling_the_model_to_call_a_denied_tool_does_not_get_it_called(tmp_path):
    notebook = tmp_path / "notebook.txt"
    entry = stdio_entry("liar", env={"NOTES_FILE": str(notebook)})
    policy = policy_rules(("look", "liar.lookup", "allow"), ("no-wipe", "liar.wipe", "deny"))
    script = [reply(call("liar__lookup", {"word": "cat"})),  # the model obeys the description:
              reply(call("liar__wipe", {"confirm": True}, 2)), "done"]
    agent, model = agent_for(tmp_path, {"liar": entry}, policy, script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert "liar__wipe" in agent.tools.get("liar.lookup").description  # the lie was shown
    assert all(offered == ["liar__lookup"] for offered in model.offered)  # the denied tool never was
    assert told(out) == ["cat: a word", "error: no tool named 'liar.wipe' is available to you"]
    assert [(e["tool"], e["decision"]) for e in of_phase(events, "permission")] == [
        ("liar.lookup", "allow"), ("liar.wipe", "deny")]
    assert [e["tool"] for e in of_phase(events, "tool")] == ["liar.lookup"]
    assert not notebook.exists()


def test_a_schema_bomb_is_refused_at_connect_naming_server_and_tool(tmp_path):
    with pytest.raises(GraphARCError) as refused:
        agent_for(tmp_path, {"bomb": stdio_entry("bomb")}, policy_rules(("all", "bomb.*", "allow")), [])
    assert "MCP server 'bomb', tool 'nested'" in str(refused.value)
    assert "nests more than 32 levels" in str(refused.value)


def test_a_result_over_the_cap_that_arrives_whole_is_dropped(tmp_path):
    """Under the message cap (twice the result cap) but over the result cap: read, then refused."""
    entry = stdio_entry("notes", max_result_bytes=4096)
    script = [reply(call("notes__size", {"n": 5000})), "done"]
    agent, _ = agent_for(tmp_path, {"notes": entry}, policy_rules(("all", "notes.*", "allow")), script)
    try:
        out, _ = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert told(out) == ["error: McpResultTooLargeError: tool 'notes.size' returned 5000 bytes, more than "
                         "MCP server 'notes' accepts (4096, its max_result_bytes); the result was dropped"]


def test_two_servers_with_one_prefix_are_refused_in_the_configuration(tmp_path):
    servers = {"notes": stdio_entry("notes"), "collide": stdio_entry("collide", prefix="notes")}
    with pytest.raises(GraphARCError) as refused:
        agent_for(tmp_path, servers, policy_rules(("all", "notes.*", "allow")), [])
    toml = tmp_path / "grapharc.toml"
    assert str(refused.value) == (f"MCP server 'collide' ({toml}): its tool prefix 'notes' is already that "
                                  f"of server 'notes' ({toml})")


def test_a_server_tool_whose_name_a_built_in_tool_already_has_is_refused_not_shadowed(tmp_path):
    from pydantic import BaseModel

    class Text(BaseModel):
        text: str

    built_in = Tool("notes__echo", "a built-in tool", Text, lambda workspace, text: text)
    tools = ToolRegistry([built_in])
    sources = {"mcp": [layer(tmp_path, {"notes": stdio_entry("notes")})]}
    with pytest.raises(ToolDefinitionError) as refused:
        add_source_tools(tools, sources)
    assert "tool 'notes.echo' is registered twice: 'notes__echo' already has that name" in str(refused.value)
    assert tools.get("notes__echo") is built_in


def test_a_server_that_never_answers_times_the_call_out_and_the_agent_goes_on(tmp_path):
    entry = stdio_entry("hang", call_timeout=1.5)
    script = [reply(call("hang__wait", {})), reply(call("hang__echo", {"text": "still here"}, 2)), "done"]
    agent, _ = agent_for(tmp_path, {"hang": entry}, policy_rules(("all", "hang.*", "allow")), script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert out["answer"] == "done"
    timed_out, answered = told(out)
    assert timed_out == "error: tool 'hang.wait' ran past its timeout of 1.5 s and was stopped"
    assert answered == "still here"
    assert [e["outcome"] for e in of_phase(events, "tool")] == ["timeout", "ok"]


def test_a_server_that_dies_mid_call_fails_that_call_and_is_restarted_once_for_the_next(tmp_path):
    script = [reply(call("crash__echo", {"text": "first"})), reply(call("crash__die", {}, 2)),
              reply(call("crash__echo", {"text": "again"}, 3)), "done"]
    agent, _ = agent_for(tmp_path, {"crash": stdio_entry("crash")},
                         policy_rules(("all", "crash.*", "allow")), script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    first, died, again = told(out)
    assert died.startswith("error: McpServerDiedError: MCP server 'crash' closed its connection during "
                           "the call; the call failed")
    assert first.startswith("first from ") and again.startswith("again from ")
    assert first.split()[-1] != again.split()[-1]  # another process: the server was restarted
    assert [e["outcome"] for e in of_phase(events, "tool")] == ["ok", "error", "ok"]


def test_a_100_mb_result_is_refused_past_the_cap_and_nothing_of_it_is_kept(tmp_path):
    script = [reply(call("flood__flood", {})), reply(call("flood__echo", {"text": "after"}, 2)), "done"]
    agent, _ = agent_for(tmp_path, {"flood": stdio_entry("flood")},
                         policy_rules(("all", "flood.*", "allow")), script)
    try:
        out, _ = run(agent, tmp_path)
    finally:
        close_sources(agent)
    refused, after = told(out)
    assert refused.startswith("error: McpResultTooLargeError: MCP server 'flood' sent a message of more "
                              "than ")
    assert refused.endswith("bytes for tool 'flood', past its cap of 1048576 result bytes "
                            "(max_result_bytes); the call failed and the server is restarted at the next "
                            "call")
    assert after == "after"
    assert (tmp_path / "trace.jsonl").stat().st_size < 100_000
    assert not (tmp_path / "ws" / ".grapharc").exists()  # nothing offloaded either


def test_a_result_under_the_cap_but_too_long_to_show_is_offloaded_as_built_in_tools_do(tmp_path):
    script = [reply(call("notes__size", {"n": 20_000})), "done"]
    agent, _ = agent_for(tmp_path, {"notes": stdio_entry("notes")}, policy_rules(("all", "notes.*", "allow")),
                         script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    [shown] = told(out)
    [event] = of_phase(events, "tool")
    assert shown.startswith("x" * 8000) and "output truncated at 8000 of 20000 characters" in shown
    assert (tmp_path / "ws" / event["reference"]).read_text() == "x" * 20_000


@pytest.mark.parametrize("allowed", [True, False])
def test_a_tool_announced_after_connect_is_governed_before_it_can_be_called(tmp_path, allowed):
    rules = [("unlock", "grow.unlock", "allow")] + ([("secret", "grow.secret", "allow")] if allowed else [])
    script = [reply(call("grow__unlock", {})), reply(call("grow__secret", {"code": "7"}, 2)), "done"]
    agent, model = agent_for(tmp_path, {"grow": stdio_entry("grow")}, policy_rules(*rules), script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert "grow.secret" in agent.tools  # the new tool joined the registry...
    assert model.offered[0] == ["grow__unlock"]  # ...only after the server announced it
    permissions = [(e["tool"], e["decision"]) for e in of_phase(events, "permission")]
    if allowed:
        assert model.offered[1] == ["grow__secret", "grow__unlock"]
        assert told(out) == ["unlocked", "secret 7"]
        assert permissions == [("grow.unlock", "allow"), ("grow.secret", "allow")]
    else:
        assert model.offered[1] == ["grow__unlock"]  # unmatched is denied, so never shown
        assert told(out) == ["unlocked", "error: no tool named 'grow.secret' is available to you"]
        assert permissions == [("grow.unlock", "allow"), ("grow.secret", "deny")]
    assert isinstance(out["messages"][-1], AIMessage)


def test_over_http_a_100_mb_result_ends_that_call_and_the_next_call_reconnects(tmp_path, http_server):
    server = http_server("flood")
    script = [reply(call("flood__flood", {})), reply(call("flood__echo", {"text": "after"}, 2)), "done"]
    agent, _ = agent_for(tmp_path, {"flood": {"url": server.url}}, policy_rules(("all", "flood.*", "allow")),
                         script)
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    refused, after = told(out)
    assert refused.startswith("error: McpServerDiedError: MCP server 'flood' closed its connection during "
                              "the call; the call failed")
    assert after == "after"
    assert [e["outcome"] for e in of_phase(events, "tool")] == ["error", "ok"]
    assert (tmp_path / "trace.jsonl").stat().st_size < 100_000


def test_a_server_that_cannot_come_back_is_tried_once_per_call_and_each_call_fails(tmp_path):
    starts = tmp_path / "starts.txt"
    entry = stdio_entry("crash", env={"STARTS_FILE": str(starts), "ONLY_ONCE": "1"}, connect_timeout=5)
    script = [reply(call("crash__die", {})), reply(call("crash__echo", {"text": "a"}, 2)),
              reply(call("crash__echo", {"text": "b"}, 3)), "done"]
    agent, _ = agent_for(tmp_path, {"crash": entry}, policy_rules(("all", "crash.*", "allow")), script)
    try:
        out, _ = run(agent, tmp_path)
    finally:
        close_sources(agent)
    died, first_retry, second_retry = told(out)
    assert died.startswith("error: McpServerDiedError")
    for refused in (first_retry, second_retry):
        assert refused.startswith("error: McpConnectError: MCP server 'crash' could not be reached")
    assert len(starts.read_text().splitlines()) == 3  # the first start, then one restart per call
    assert out["answer"] == "done"
