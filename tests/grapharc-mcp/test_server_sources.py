"""MCP servers from three places, read alike: grapharc.toml, the policy document, and
``--mcp-server`` flags; a name defined in two of them is refused naming both, and a secret given
to a flag's server stays a variable's name, off the trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_setup import SERVERS, stdio_entry, toml_entry
from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.errors import ConfigurationError
from grapharc.mcp.config import layered_servers
from grapharc.mcp.flags import server_entry, table_from_flags
from grapharc.plugins import ToolSourceLayer

GRAPHARC = str(Path(sys.executable).parent / "grapharc")
NOTES_COMMAND = f"{sys.executable} {SERVERS} notes"
ALLOW_NOTES = ('version = "p"\n[[rules]]\nid = "notes"\nresource = "tool"\ntool = "notes.*"\n'
               'action = "allow"\n')


@pytest.mark.parametrize(("value", "entry"), [
    ("docs=https://example.com/mcp", ("docs", {"url": "https://example.com/mcp"})),
    ("local=http://127.0.0.1:9/mcp", ("local", {"url": "http://127.0.0.1:9/mcp"})),
    ("files=npx -y server-files '/srv/my files'",
     ("files", {"command": "npx", "args": ["-y", "server-files", "/srv/my files"]})),
    ("tool=/usr/bin/tool --flag=a=b", ("tool", {"command": "/usr/bin/tool", "args": ["--flag=a=b"]})),
    ('api={"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}',
     ("api", {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}})),
])
def test_a_flag_reads_a_url_a_json_table_or_a_command_line_by_its_first_character(value, entry):
    assert server_entry(value) == entry


@pytest.mark.parametrize(("values", "message"), [
    (["notes"], "--mcp-server 'notes': is not NAME=SERVER"),
    (["=cmd"], "--mcp-server '=cmd': is not NAME=SERVER"),
    (["notes= "], "--mcp-server 'notes= ': names no server after '='"),
    (["notes={oops"], "--mcp-server 'notes={oops': its server is not a JSON object"),
    (["notes=cmd 'open"], "--mcp-server \"notes=cmd 'open\": its command line cannot be split into words"),
    (["a=x", "a=y"], "--mcp-server 'a=y': server 'a' is already given by an earlier --mcp-server"),
])
def test_a_flag_that_cannot_be_read_is_refused_naming_it(values, message):
    with pytest.raises(ConfigurationError) as refused:
        table_from_flags(values)
    assert str(refused.value).startswith(message)


def test_a_server_defined_in_the_config_and_in_the_policy_document_is_refused_naming_both(tmp_path):
    layers = [ToolSourceLayer("/etc/grapharc.toml", {"servers": {"notes": stdio_entry("notes")}}, tmp_path),
              ToolSourceLayer("policy /p.toml (flag)", {"servers": {"notes": {"url": "http://h/mcp"}}},
                              tmp_path)]
    with pytest.raises(ConfigurationError) as refused:
        layered_servers(layers)
    assert str(refused.value) == ("MCP server 'notes' is defined twice: in /etc/grapharc.toml and in "
                                  "policy /p.toml (flag)")


def test_a_bad_entry_in_the_policy_document_is_refused_naming_the_document(tmp_path):
    layers = [ToolSourceLayer("policy /p.toml (flag)", {"servers": {"x": {"command": "a", "colour": 1}}},
                              tmp_path)]
    with pytest.raises(ConfigurationError) as refused:
        layered_servers(layers)
    assert str(refused.value).startswith("policy /p.toml (flag): [mcp.servers].x.colour is not a server "
                                         "setting")


def mcp_list(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(build_app(), ["mcp", "list", "--json", *args])
    return result.exit_code, result.stdout


def test_mcp_list_shows_servers_of_every_source_and_where_each_is_defined(tmp_path, monkeypatch):
    (tmp_path / "grapharc.toml").write_text(toml_entry("journal", stdio_entry("notes")))
    (tmp_path / "policy.toml").write_text(ALLOW_NOTES + toml_entry("kept", stdio_entry("notes")))

    code, out = mcp_list(tmp_path, "--policy", "policy.toml", "--mcp-server", f"notes={NOTES_COMMAND}",
                         monkeypatch=monkeypatch)

    assert code == 0, out
    servers = {server["name"]: server for server in json.loads(out)["servers"]}
    assert {name: server["defined_in"] for name, server in servers.items()} == {
        "journal": str(tmp_path / "grapharc.toml"), "kept": f"policy {tmp_path / 'policy.toml'} (flag)",
        "notes": "--mcp-server"}
    assert all(server["status"] == "connected" for server in servers.values())
    decided = {tool["name"]: tool["decision"] for tool in servers["notes"]["tools"]}
    assert decided["notes.echo"] == "allow"


def test_mcp_list_refuses_a_flag_server_whose_name_the_config_already_defines(tmp_path, monkeypatch):
    (tmp_path / "grapharc.toml").write_text(toml_entry("notes", stdio_entry("notes")))

    code, out = mcp_list(tmp_path, "--mcp-server", "notes=https://example.com/mcp", monkeypatch=monkeypatch)

    assert code == 2
    assert json.loads(out)["error"]["message"] == (f"MCP server 'notes' is defined twice: in "
                                                   f"{tmp_path / 'grapharc.toml'} and in --mcp-server")


def grapharc(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GRAPHARC, *args], cwd=cwd, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=180)


def agent_run(tmp_path: Path, *args: str, **env: str) -> tuple[dict, str]:
    """``grapharc agent`` whose scripted model calls ``notes__whoami``: its document and its trace."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "script.json").write_text(json.dumps([{"tool_calls": [{"name": "notes__whoami", "args": {}}]},
                                                      "done"]))
    ran = grapharc(tmp_path, "agent", "who am I", "--workspace", "ws", "--model", "mock/agent", "--script",
                   "script.json", "--trace", "trace.jsonl", "--json", *args, **env)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout), (tmp_path / "trace.jsonl").read_text()


def test_an_agent_uses_a_server_its_policy_document_defines(tmp_path):
    entry = stdio_entry("notes", env={"NOTES_TOKEN": "from-the-policy"})
    (tmp_path / "policy.toml").write_text(ALLOW_NOTES + toml_entry("notes", entry))

    document, trace = agent_run(tmp_path, "--policy", "policy.toml")

    [call] = document["tool_calls"]
    assert (call["tool"], call["outcome"]) == ("notes.whoami", "ok")
    tools = [(e["tool"], e["server"], e["executor"]) for e in map(json.loads, trace.splitlines())
             if e["phase"] == "tool"]
    assert tools == [("notes.whoami", "notes", "mcp")]
    assert "from-the-policy" in trace  # what the tool answered: the env the policy gave its server


def test_an_agent_uses_a_flag_server_whose_secret_never_reaches_the_trace(tmp_path):
    (tmp_path / "policy.toml").write_text(ALLOW_NOTES)
    secret = "flag-secret-0123456789"
    flag = json.dumps({"command": sys.executable, "args": [str(SERVERS), "notes"],
                       "env": {"NOTES_TOKEN": "${FLAG_SERVER_CODE}"}})

    document, trace = agent_run(tmp_path, "--policy", "policy.toml", "--mcp-server", f"notes={flag}",
                                FLAG_SERVER_CODE=secret)

    [call] = document["tool_calls"]
    assert (call["tool"], call["outcome"]) == ("notes.whoami", "ok")
    assert secret not in trace and secret not in json.dumps(document)
    assert "[redacted:FLAG_SERVER_CODE]" in trace
