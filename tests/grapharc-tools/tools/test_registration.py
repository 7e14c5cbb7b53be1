"""The seven tools are registered by grapharc-tools and built as core's Tool contract says."""

from __future__ import annotations

import inspect

import pytest
from tool_names import SEVEN

from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError, ToolRegistry
from grapharc.plugins import registry, resolve_factory

DECLARED = {  # name: (side effect, needs network, idempotent)
    "read_file": (SideEffect.READ, False, True),
    "write_file": (SideEffect.WRITE, False, True),
    "edit_file": (SideEffect.WRITE, False, False),
    "list_dir": (SideEffect.READ, False, True),
    "glob": (SideEffect.READ, False, True),
    "grep": (SideEffect.READ, False, True),
    "run_command": (SideEffect.EXEC, False, False),
}


def test_grapharc_tools_registers_the_seven_tools():
    entries = registry("tools")
    assert {name: entries[name].distribution for name in SEVEN} == dict.fromkeys(SEVEN, "grapharc-tools")


def test_the_registry_builds_all_seven_from_the_plugins():
    assert ToolRegistry.from_plugins().names() >= sorted(SEVEN)
    assert ToolRegistry.from_plugins(SEVEN).names() == sorted(SEVEN)


@pytest.mark.parametrize("name", SEVEN)
def test_each_factory_takes_no_arguments_and_returns_the_tool_of_its_name(name):
    entry = registry("tools")[name]
    factory = resolve_factory(entry.item.factory, plugin=entry.distribution)
    assert list(inspect.signature(factory).parameters) == []
    tool = factory()
    assert isinstance(tool, Tool) and tool.name == name


@pytest.mark.parametrize("name", SEVEN)
def test_each_tool_declares_its_side_effect_network_and_idempotency(name, tools):
    tool = tools.get(name)
    assert (tool.side_effect, tool.needs_network, tool.idempotent) == DECLARED[name]


@pytest.mark.parametrize("name", SEVEN)
def test_each_tool_is_a_module_level_function_another_process_can_import(name, tools):
    tool = tools.get(name)
    module, _, function = tool.import_path.partition(":")
    assert module.startswith("grapharc.tools.") and function == name
    assert next(iter(inspect.signature(tool.function).parameters)) == "workspace"


@pytest.mark.parametrize("name", SEVEN)
def test_the_schema_a_model_sees_describes_every_argument(name, tools):
    schema = tools.get(name).schema()["function"]
    assert schema["name"] == name and len(schema["description"]) > 40
    properties = schema["parameters"]["properties"]
    assert properties and all(field.get("description") for field in properties.values())


@pytest.mark.parametrize("name", SEVEN)
def test_an_argument_the_schema_does_not_have_is_refused_before_anything_runs(name, tools):
    with pytest.raises(ToolArgumentError, match="surprise"):
        tools.get(name).arguments({"path": "a", "pattern": "a", "argv": ["true"], "surprise": 1})


def test_the_package_exports_its_errors_lazily():
    import grapharc.tools as package
    from grapharc.tools import ToolInputError, WorkspaceEscape
    from grapharc.tools.workspace import WorkspaceEscape as defined

    assert WorkspaceEscape is defined and issubclass(ToolInputError, ValueError)
    assert {"WorkspaceEscape", "ToolInputError", "Workspace"} <= set(dir(package))
