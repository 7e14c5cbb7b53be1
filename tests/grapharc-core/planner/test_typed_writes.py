"""A kind may declare the fields it writes with their types; the plugins surface's state gains them."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
import typer
from pydantic import Field
from typer.testing import CliRunner

from grapharc.cli.governance_commands import add_governance_commands
from grapharc.planner import NodeSpec
from grapharc.planner.run_state import DeclaredWritesError
from grapharc.planner.surface import PLUGINS, load_surface
from grapharc.plugins import hookimpl
from grapharc.stdlib import StdlibState
from grapharc.testing import in_process_source, plugin_host

LOOKUP_GRAPH = {"nodes": [{"name": "lookup"}],
                "edges": [{"source": "__start__", "target": "lookup"}],
                "input": {"goal": "the weather"}}


def build_lookup(*_: Any) -> Any:
    return lambda state: {"answer": f"looked up {state.goal}"}


def kinds_plugin(*specs: NodeSpec) -> type:
    class Plugin:
        @staticmethod
        @hookimpl
        def register_node_kinds(register: Any) -> None:
            for spec in specs:
                register(spec)

    return Plugin


def invoke(*args: str) -> Any:
    app = typer.Typer()
    add_governance_commands(app)
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def in_tmp(clean_workdir):
    (clean_workdir / "graph.json").write_text(json.dumps(LOOKUP_GRAPH))
    return clean_workdir


def test_typed_writes_keep_the_names_and_remember_the_types():
    spec = NodeSpec(name="lookup", factory=build_lookup, writes={"answer": str})

    assert spec.writes == frozenset({"answer"}) and dict(spec.write_types) == {"answer": str}
    assert NodeSpec(name="lookup", factory=build_lookup, writes={"answer"}).write_types == {}


@pytest.mark.parametrize("writes", ["answer", 3, {"_private": str}, {"not a name"}])
def test_writes_that_name_no_fields_are_refused(writes):
    with pytest.raises(ValueError, match=r"writes|written field"):
        NodeSpec(name="lookup", factory=build_lookup, writes=writes)


def test_the_plugins_state_gains_a_typed_field_starting_empty():
    plugin = kinds_plugin(NodeSpec(name="lookup", factory=build_lookup,
                                   writes={"answer": str, "hits": list[int],
                                           "mood": Annotated[Literal["calm", "busy"],
                                                             Field(default="calm")]}))
    with plugin_host(in_process_source(plugin, name="lookups"), installed=False):
        state = load_surface(PLUGINS).state_schema()

    assert (state.answer, state.hits, state.mood) == ("", [], "calm")
    assert state.goal == "" and issubclass(type(state), StdlibState)


def test_without_typed_writes_the_plugins_state_is_the_stdlib_state():
    with plugin_host(installed=False):
        assert load_surface(PLUGINS).state_schema is StdlibState


def test_two_kinds_giving_one_field_two_types_are_refused_naming_both():
    first = kinds_plugin(NodeSpec(name="lookup", factory=build_lookup, writes={"answer": str}))
    second = kinds_plugin(NodeSpec(name="count", factory=build_lookup, writes={"answer": int}))
    with plugin_host(in_process_source(first, name="dist-one"),
                     in_process_source(second, name="dist-two"), installed=False), \
            pytest.raises(DeclaredWritesError) as refused:
        load_surface(PLUGINS)

    message = str(refused.value)
    assert "'count' (from dist-two)" in message and "'lookup' (from dist-one)" in message


@pytest.mark.parametrize(("writes", "message"), [
    ({"summary": int}, "the state StdlibState declares it as str"),
    ({"answer": Literal["only"]}, "no empty value"),
    ({"answer": object()}, "not a type pydantic can validate"),
    ({"model_dump": str}, "a name pydantic models reserve"),
])
def test_typed_writes_no_state_can_hold_are_refused_naming_kind_and_field(writes, message):
    plugin = kinds_plugin(NodeSpec(name="lookup", factory=build_lookup, writes=writes))
    with plugin_host(in_process_source(plugin, name="lookups"), installed=False), \
            pytest.raises(DeclaredWritesError, match=message) as refused:
        load_surface(PLUGINS)

    assert "kind 'lookup' (from lookups)" in str(refused.value)


def test_a_plugin_kind_with_typed_writes_is_admitted_by_check_only_and_then_runs(in_tmp):
    plugin = kinds_plugin(NodeSpec(name="lookup", factory=build_lookup, writes={"answer": str}))
    with plugin_host(in_process_source(plugin, name="lookups"), installed=False):
        checked = invoke("run", "graph.json", "--check-only", "--json")
        ran = invoke("run", "graph.json", "--max-tokens", "10", "--json")

    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["admission"]["status"] == "admitted"
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["state"]["answer"] == "looked up the weather"


def test_check_only_and_a_real_run_agree_on_an_untyped_write_the_state_lacks(in_tmp):
    plugin = kinds_plugin(NodeSpec(name="lookup", factory=build_lookup, writes={"answer"}))
    with plugin_host(in_process_source(plugin, name="lookups"), installed=False):
        checked = invoke("run", "graph.json", "--check-only", "--json")
        ran = invoke("run", "graph.json", "--max-tokens", "10", "--json")

    for result in (checked, ran):
        assert result.exit_code == 1, result.output
        document = json.loads(result.stdout)
        assert document["admission"]["failed"] == ["write_unknown_field"]
        assert document["executed"] is False
