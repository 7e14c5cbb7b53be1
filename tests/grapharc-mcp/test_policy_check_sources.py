"""``grapharc policy check`` checks a document's ``[mcp]`` servers as an agent's source reads them,
starting none of them."""

from __future__ import annotations

import json

from grapharc.testing.cli import run_cli

RULES = '''version = "1"

[[rules]]
id = "files"
resource = "tool"
action = "allow"
tool = "files.*"
'''


def test_the_servers_a_document_configures_are_listed_and_none_is_started(tmp_path):
    never_run = tmp_path / "never-run"
    (tmp_path / "policy.toml").write_text(RULES + f'''
[mcp.servers.files]
command = "sh"
args = ["-c", "touch {never_run}"]

[mcp.servers.docs]
url = "http://127.0.0.1:9/mcp"
prefix = "kb"
''')
    result = run_cli(["policy", "check", str(tmp_path / "policy.toml"), "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["tool_sources"] == {"mcp": [
        "server files: stdio sh, its tools named files.TOOL",
        "server docs: http http://127.0.0.1:9/mcp, its tools named kb.TOOL"]}
    assert not never_run.exists()


def test_a_mistake_in_a_server_is_an_error_naming_the_server_and_the_key(tmp_path):
    (tmp_path / "policy.toml").write_text(RULES + '''
[mcp.servers.files]
command = "sh"
url = "http://127.0.0.1:9/mcp"
''')
    result = run_cli(["policy", "check", str(tmp_path / "policy.toml"), "--json"])
    assert result.exit_code == 1
    [error] = json.loads(result.stdout)["errors"]
    assert error["where"] == "[mcp]"
    assert "files" in error["message"] and "exactly one of command" in error["message"]
