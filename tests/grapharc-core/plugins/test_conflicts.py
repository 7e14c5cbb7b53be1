"""A name two distributions register is a conflict isolated like any other plugin failure:
core keeps its names, otherwise the first distribution by name keeps it; the other shows
status ``conflict`` naming both, and everything else works. Strict mode makes it an error."""

from __future__ import annotations

import json
import types

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app, run
from grapharc.planner import CostEstimate, NodeSpec
from grapharc.planner.surface import registry_from_plugins
from grapharc.plugins import DuplicateRegistrationError, hookimpl
from grapharc.testing import in_process_source, plugin_host

pytestmark = pytest.mark.smoke


def kind_body(*_):
    return lambda state: {}


def kinds_plugin(*names: str) -> types.SimpleNamespace:
    @hookimpl
    def register_node_kinds(register):
        for name in names:
            register(NodeSpec(name=name, factory=kind_body, worst_case=CostEstimate(tokens=1),
                              description=f"{name} by its plugin"))

    return types.SimpleNamespace(register_node_kinds=register_node_kinds)


def commands_plugin(greeting: str, *names: str) -> types.SimpleNamespace:
    @hookimpl
    def register_commands(app):
        for name in names:
            app.command(name)(lambda: print(greeting))

    return types.SimpleNamespace(register_commands=register_commands)


def test_a_kind_two_plugins_register_goes_to_the_first_by_name_whatever_the_install_order():
    with plugin_host(in_process_source(kinds_plugin("lookup", "zeta_only"), name="zeta-dist"),
                     in_process_source(kinds_plugin("lookup"), name="alpha-dist"),
                     installed=False) as host:
        kinds = host.registry("node_kinds")
        assert kinds["lookup"].distribution == "alpha-dist"
        assert kinds["zeta_only"].distribution == "zeta-dist"
        record = host.records["zeta-dist"]
        assert record.status == "conflict"
        assert record.registered["node_kinds"] == ["zeta_only"]
        assert "'lookup' is registered by both alpha-dist and zeta-dist" in record.errors[0]
        assert host.records["alpha-dist"].status == "loaded"


def test_core_keeps_its_kind_even_against_a_plugin_whose_name_sorts_first():
    with plugin_host(in_process_source(kinds_plugin("summarize", "triage"), name="aaa-dist"),
                     installed=False) as host:
        registry = registry_from_plugins()
        assert registry.get("summarize").description != "summarize by its plugin"
        assert "triage" in registry
        assert host.records["aaa-dist"].status == "conflict"
        assert "grapharc-core and aaa-dist" in host.records["aaa-dist"].errors[0]


def test_a_conflicting_plugin_stays_active_for_the_registries_filled_after_the_conflict():
    plugin = kinds_plugin("summarize")
    plugin.register_commands = commands_plugin("later", "later").register_commands
    with plugin_host(in_process_source(plugin, name="both-dist"), installed=False) as host:
        host.registry("node_kinds")
        assert "later" in host.commands()
        assert host.records["both-dist"].status == "conflict"


def test_a_command_two_plugins_register_leaves_every_command_working(capsys):
    with plugin_host(in_process_source(commands_plugin("from zz", "hello", "plugins"), name="zz-dist"),
                     in_process_source(commands_plugin("from aa", "hello"), name="aa-dist"),
                     installed=False):
        assert run(["hello"]) == 0
        assert capsys.readouterr().out == "from aa\n"
        assert run(["version"]) == 0
        capsys.readouterr()
        assert run(["plugins", "--json"]) == 1
        document = json.loads(capsys.readouterr().out)
    by_name = {d["name"]: d for d in document["distributions"]}
    loser = by_name["zz-dist"]
    assert loser["status"] == "conflict" and loser["registered"] == {}
    assert any("'hello' is registered by both aa-dist and zz-dist" in e for e in loser["errors"])
    assert any("'plugins' is registered by both grapharc-core and zz-dist" in e for e in loser["errors"])
    assert (by_name["aa-dist"]["status"], by_name["aa-dist"]["registered"]) == (
        "loaded", {"commands": ["hello"]})


def test_strict_mode_makes_a_command_conflict_an_error_naming_both(capsys):
    with plugin_host(in_process_source(commands_plugin("mine", "version"), name="my-dist"),
                     installed=False, strict=True):
        assert run(["plugins", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "DuplicateRegistrationError"
    assert "grapharc-core and my-dist" in error["message"]


def test_strict_mode_makes_a_kind_conflict_an_error():
    with plugin_host(in_process_source(kinds_plugin("verify"), name="my-dist"), installed=False,
                     strict=True) as host, pytest.raises(DuplicateRegistrationError, match="my-dist"):
        host.registry("node_kinds")


def test_building_the_app_twice_registers_each_command_once():
    with plugin_host(in_process_source(commands_plugin("hi", "hello"), name="hi-dist"),
                     installed=False) as host:
        build_app()
        app = build_app()
        assert CliRunner().invoke(app, ["hello"]).output == "hi\n"
        assert host.records["hi-dist"].registered["commands"] == ["hello"]
