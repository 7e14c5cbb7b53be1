"""``--registry module:attr`` resolves to a NodeRegistry or is refused, uncalled, naming why."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from grapharc.cli.governance_commands import add_governance_commands
from grapharc.planner import NodeRegistry, NodeSpec
from grapharc.planner.surface import RegistrySpecError, load_surface

MODULE = "registry_refs_fixture"
CALLS: list[str] = []


def kinds() -> list[NodeSpec]:
    return [NodeSpec(name="look", factory=lambda spec: lambda state: {})]


def build() -> NodeRegistry:
    CALLS.append("build")
    return NodeRegistry(kinds())


def unannotated():  # type: ignore[no-untyped-def]
    CALLS.append("unannotated")
    return NodeRegistry(kinds())


def needs_arguments(size: int) -> NodeRegistry:
    CALLS.append("needs_arguments")
    return NodeRegistry(kinds())


def lies() -> NodeRegistry:
    CALLS.append("lies")
    return "not a registry"  # type: ignore[return-value]


def breaks() -> NodeRegistry:
    CALLS.append("breaks")
    raise RuntimeError("the registry could not be built")


def unresolvable() -> Nowhere:  # type: ignore[name-defined]  # noqa: F821  # a name nothing defines
    CALLS.append("unresolvable")
    return NodeRegistry(kinds())


@pytest.fixture(autouse=True)
def fixture_module(monkeypatch):
    module = types.ModuleType(MODULE)
    for function in (build, unannotated, needs_arguments, lies, breaks, unresolvable):
        setattr(module, function.__name__, function)
    module.REGISTRY = NodeRegistry(kinds())
    module.NUMBER = 42
    monkeypatch.setitem(sys.modules, MODULE, module)
    CALLS.clear()
    return module


def kinds_command(*args: str, stdin: str = "") -> Any:
    app = typer.Typer()
    add_governance_commands(app)
    return CliRunner().invoke(app, ["kinds", *args], input=stdin)


def test_a_registry_object_and_a_factory_declared_to_return_one_both_resolve():
    assert load_surface(f"{MODULE}:REGISTRY").registry.kinds() == ["look"]
    assert load_surface(f"{MODULE}:build").registry.kinds() == ["look"]
    assert CALLS == ["build"]


@pytest.mark.parametrize(("attr", "message"), [
    ("unannotated", "does not declare that it returns a NodeRegistry; it was not called"),
    ("needs_arguments", "cannot be called without arguments"),
    ("unresolvable", "whose annotations cannot be resolved"),
    ("NUMBER", r"'NUMBER' \(int\), not a NodeRegistry"),
])
def test_anything_that_does_not_declare_a_registry_is_refused_uncalled(attr, message):
    with pytest.raises(RegistrySpecError, match=message):
        load_surface(f"{MODULE}:{attr}")
    assert CALLS == []


@pytest.mark.parametrize(("attr", "message"), [
    ("lies", "returned a str, not the NodeRegistry it declares"),
    ("breaks", "raised RuntimeError: the registry could not be built"),
])
def test_a_factory_that_fails_its_declaration_is_refused_naming_it(attr, message):
    with pytest.raises(RegistrySpecError, match=message):
        load_surface(f"{MODULE}:{attr}")


@pytest.mark.parametrize("spec", ["sys:exit", "os:system", "builtins:input"])
def test_the_issues_references_exit_2_without_being_called(spec):
    result = kinds_command("--registry", spec, stdin="typed by the user\n")

    assert result.exit_code == 2, result.output
    assert "it was not called" in result.stderr


@pytest.mark.parametrize(("writes", "schema"), [(5, None), ({"look": "field"}, None),
                                                ({"look": [["nested"]]}, None), ({}, dict)])
def test_malformed_declarations_beside_the_registry_are_refused(fixture_module, writes, schema):
    fixture_module.WRITES, fixture_module.STATE_SCHEMA = writes, schema

    with pytest.raises(RegistrySpecError, match=r"WRITES|STATE_SCHEMA"):
        load_surface(f"{MODULE}:REGISTRY")


safe_modules = st.sampled_from([MODULE, "sys", "builtins", "json", "grapharc.planner", "no_such"])


@st.composite
def references(draw: st.DrawFn) -> str:
    module = draw(safe_modules)
    known = sorted(vars(sys.modules[module])) if module in sys.modules else []
    attr = draw(st.sampled_from(known) | st.text(max_size=8)) if known else draw(st.text(max_size=8))
    return draw(st.sampled_from([f"{module}:{attr}", f"{attr}:{module}", attr, f"{module}:"]))


@settings(max_examples=300, deadline=None)
@given(st.one_of(references(), st.text(max_size=20)))
def test_any_reference_resolves_to_a_registry_or_is_refused_with_a_registry_spec_error(spec):
    try:
        surface = load_surface(spec)
    except RegistrySpecError:
        return
    assert isinstance(surface.registry, NodeRegistry)
