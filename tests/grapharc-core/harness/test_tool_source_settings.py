"""A tool source's table, read from grapharc.toml, from the policy document and from its flag: one
layer each, in that order, each naming where it came from; a policy document may hold the table
only when a plugin registers that source."""

from __future__ import annotations

import pytest

from grapharc.config import load_config
from grapharc.harness.setup import AgentSettingsError, source_layers, tool_source_settings
from grapharc.plugins import ToolSourceInfo, hookimpl
from grapharc.policy.engine import PolicyDocumentError, PolicyEngine
from grapharc.policy.files import load_policy_file
from grapharc.testing import in_process_source, plugin_host

POLICY = 'version = "v"\n[[rules]]\nid = "all"\nresource = "tool"\ntool = "*"\naction = "allow"\n'


def from_flags(values: list[str]) -> dict[str, object]:
    return {"servers": {value: {"flag": True} for value in values}}


class Things:
    @staticmethod
    @hookimpl
    def register_tool_sources(register):
        register(ToolSourceInfo(name="things", factory="nowhere:open", from_flags=from_flags))


def test_each_place_is_a_layer_naming_where_it_came_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grapharc.toml").write_text('[things.servers.a]\nx = 1\n')
    (tmp_path / "policy.toml").write_text(POLICY + '[things.servers.b]\nx = 2\n')
    with plugin_host(in_process_source(Things, name="things-source"), installed=False):
        config = load_config({}, cwd=tmp_path)
        policy = load_policy_file(tmp_path / "policy.toml", "flag")
        layers = tool_source_settings(config, policy, {"things": ["c"]})
        engine = PolicyEngine.from_loaded(policy)  # the rules read past the source's own table
    assert [(layer.origin, dict(layer.table), layer.base) for layer in source_layers(layers["things"])] == [
        (str(tmp_path / "grapharc.toml"), {"servers": {"a": {"x": 1}}}, tmp_path),
        (f"policy {tmp_path / 'policy.toml'} (flag)", {"servers": {"b": {"x": 2}}}, tmp_path),
        ("--things-server", {"servers": {"c": {"flag": True}}}, tmp_path)]
    assert engine.check_tool("anything").decision.value == "allow"


def test_a_policy_document_with_the_table_of_no_installed_source_is_refused(tmp_path):
    (tmp_path / "policy.toml").write_text(POLICY + '[things.servers.b]\nx = 2\n')
    with plugin_host(installed=False), pytest.raises(PolicyDocumentError, match="things"):
        PolicyEngine.from_loaded(load_policy_file(tmp_path / "policy.toml", "flag"))


def test_a_flag_for_a_source_no_plugin_reads_is_refused_naming_the_flag(tmp_path):
    with plugin_host(installed=False):
        config = load_config({}, cwd=tmp_path)
        with pytest.raises(AgentSettingsError, match="--things-server needs a plugin"):
            tool_source_settings(config, None, {"things": ["a"]})


def test_a_session_stored_with_one_table_reads_as_one_layer(tmp_path):
    [layer] = source_layers({"table": {"servers": {}}, "base": str(tmp_path)})
    assert (layer.origin, dict(layer.table), layer.base) == ("grapharc.toml", {"servers": {}}, tmp_path)
