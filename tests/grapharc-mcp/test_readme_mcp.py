"""The MCP section of docs/concepts/agents.md: its grapharc.toml is read as an agent reads it, its
policy document loads, and the rules decide what the section says they decide."""

from __future__ import annotations

import re
from pathlib import Path

from grapharc.config import load_config
from grapharc.mcp.config import parse_servers
from grapharc.policy.engine import PolicyEngine
from grapharc.policy.files import load_policy_file

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "concepts" / "agents.md"
SECTION = PAGE.read_text().split("## MCP servers as tools", 1)[1].split("\n## ", 1)[0]
CONFIG, POLICY = re.findall(r"```toml[^\n]*\n(.*?)```", SECTION, re.S)


def test_the_readmes_configuration_is_read_as_an_agent_reads_it(tmp_path):
    (tmp_path / "grapharc.toml").write_text(CONFIG)
    config = load_config({}, cwd=tmp_path)
    notes, search = parse_servers(config.sections["mcp"], tmp_path)
    assert (notes.transport, notes.command, notes.args, notes.call_timeout) == (
        "stdio", "python", ("notes_server.py",), 30.0)
    assert notes.secret_names() == ["NOTES_TOKEN"] and notes.side_effects == {"tidy": "read_only"}
    assert (search.transport, search.tool_prefix, search.connect_timeout, search.max_result_bytes) == (
        "http", "web", 10.0, 262144)
    assert search.secret_names() == ["SEARCH_API_TOKEN"]


def test_the_readmes_policy_decides_as_the_section_says(tmp_path):
    (tmp_path / "policy.toml").write_text(POLICY)
    rules = PolicyEngine.from_loaded(load_policy_file(tmp_path / "policy.toml", "flag")).permission_policy(
        None, None)
    decided = {tool: rules.decide(tool).decision.value
               for tool in ("notes.echo", "notes.add_note", "web.search")}
    assert decided == {"notes.echo": "allow", "notes.add_note": "ask", "web.search": "deny"}
