"""``grapharc mcp list``: each configured server's status, its tools and the policy rule each falls
under; exit 0 when all connect, 1 when one fails, 2 when the configuration is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_setup import stdio_entry, toml_entry
from typer.testing import CliRunner

from grapharc.cli.main import build_app


def mcp_list(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(build_app(), ["mcp", "list", *args])
    return result.exit_code, result.stdout, result.stderr


def test_it_lists_servers_tools_and_the_rule_each_tool_falls_under(tmp_path, monkeypatch):
    (tmp_path / "grapharc.toml").write_text(toml_entry("notes", stdio_entry("notes"))
                                            + toml_entry("bomb", stdio_entry("bomb")))
    (tmp_path / "policy.toml").write_text(
        'version = "p"\n[[rules]]\nid = "read"\nresource = "tool"\ntool = "notes.*"\naction = "allow"\n'
        '[[rules]]\nid = "write"\nresource = "tool"\ntool = "notes.add_note"\naction = "ask"\n')

    code, out, err = mcp_list(tmp_path, "--policy", "policy.toml", "--json", monkeypatch=monkeypatch)

    assert code == 0, err
    document = json.loads(out)
    notes, bomb = document["servers"]
    assert (notes["name"], notes["transport"], notes["status"]) == ("notes", "stdio", "connected")
    rules = {tool["name"]: (tool["decision"], tool["rule"], tool["side_effect"]) for tool in notes["tools"]}
    assert rules["notes.add_note"] == ("ask", "write", "exec")
    assert rules["notes.echo"] == ("allow", "read", "read")
    assert [tool["name"] for tool in bomb["tools"]] == ["bomb.fine"]
    assert bomb["tools"][0]["rule"] == "(no rule: denied)"
    [refused] = bomb["refused"]
    assert refused["tool"] == "nested" and "MCP server 'bomb', tool 'nested'" in refused["reason"]


def test_a_server_that_fails_is_listed_with_the_reason_and_the_exit_code_is_1(tmp_path, monkeypatch):
    (tmp_path / "grapharc.toml").write_text(
        toml_entry("notes", stdio_entry("notes"))
        + toml_entry("gone", {"command": "/nonexistent/server", "connect_timeout": 5})
        + toml_entry("slow", stdio_entry("hang", connect_timeout=0.001)))

    code, out, _ = mcp_list(tmp_path, monkeypatch=monkeypatch)

    assert code == 1
    lines = out.splitlines()
    source = f"stdio, from {tmp_path / 'grapharc.toml'}"
    assert lines[0] == f"notes ({source}): connected"
    assert any(line.startswith(f"gone ({source}): failed: MCP server 'gone' could not be reached: ") and
               "/nonexistent/server" in line for line in lines)
    assert any(line.startswith(f"slow ({source}): failed: MCP server 'slow' did not finish its handshake "
                               "within 0.001 s") for line in lines)


@pytest.mark.parametrize(("entry", "message"), [
    ('[mcp.servers.x]\nargs = ["a"]\n', "[mcp.servers].x needs exactly one of command (a stdio server) or "
                                        "url (a streamable HTTP server)"),
    ('[mcp.servers.x]\ncommand = "a"\ncall_timeout = -1\n', "[mcp.servers].x.call_timeout must be a number"),
    ('[mcp.servers.x]\nurl = "ftp://h"\n', "[mcp.servers].x.url must be an http:// or https:// URL"),
    ('[mcp.servers.x]\ncommand = "a"\ncolour = "red"\n', "[mcp.servers].x.colour is not a server setting"),
    ('[mcp.servers.Bad]\ncommand = "a"\n', "[mcp.servers].Bad is not a server name"),
    ('[mcp.servers.x]\nurl = "http://h"\nenv = { A = "b" }\n',
     "[mcp.servers].x.env applies to a stdio server (command), not to url"),
    ('[mcp.servers.x]\ncommand = "a"\nside_effects = { t = "maybe" }\n',
     "[mcp.servers].x.side_effects.t must be one of read_only, side_effecting"),
    ('[mcp]\nservers = 3\n', "mcp.servers must be a table of servers"),
])
def test_a_bad_entry_is_refused_naming_the_key_with_exit_code_2(tmp_path, monkeypatch, entry, message):
    (tmp_path / "grapharc.toml").write_text(entry)

    code, out, _ = mcp_list(tmp_path, "--json", monkeypatch=monkeypatch)

    assert code == 2
    error = json.loads(out)["error"]
    assert error["message"].startswith(f"{tmp_path / 'grapharc.toml'}: {message}") and "Traceback" not in out


def test_a_secret_named_by_the_config_but_not_set_is_refused_naming_server_key_and_variable(
        tmp_path, monkeypatch):
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    (tmp_path / "grapharc.toml").write_text(
        toml_entry("notes", stdio_entry("notes", env={"NOTES_TOKEN": "${NOT_SET_TOKEN}"})))

    code, out, _ = mcp_list(tmp_path, monkeypatch=monkeypatch)

    assert code == 1
    assert "MCP server 'notes': env.NOTES_TOKEN names ${NOT_SET_TOKEN}, which is not set" in out


def test_with_no_mcp_servers_it_says_so(tmp_path, monkeypatch):
    code, out, _ = mcp_list(tmp_path, monkeypatch=monkeypatch)
    assert (code, out) == (0, "no MCP servers configured (no grapharc.toml)\n")


def test_without_policy_flag_the_configs_policy_setting_decides(tmp_path, monkeypatch):
    (tmp_path / "grapharc.toml").write_text('[grapharc]\npolicy = "policy.toml"\n'
                                            + toml_entry("notes", stdio_entry("notes")))
    (tmp_path / "policy.toml").write_text(
        'version = "p"\n[[rules]]\nid = "echo-only"\nresource = "tool"\ntool = "notes.echo"\n'
        'action = "allow"\n')

    code, out, _ = mcp_list(tmp_path, "--json", monkeypatch=monkeypatch)

    assert code == 0
    [notes] = json.loads(out)["servers"]
    decided = {tool["name"]: (tool["decision"], tool["rule"]) for tool in notes["tools"]}
    assert decided["notes.echo"] == ("allow", "echo-only")
    assert decided["notes.add_note"] == ("deny", "(no rule: denied)")
