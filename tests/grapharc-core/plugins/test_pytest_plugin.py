"""GraphARC's pytest plugin: pytest finds it through grapharc-core's entry point, loading it costs
no more than GraphARC's own package, and its fixture hands a test a host of the installed plugins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from grapharc.plugins import PluginHost, get_host

HEAVY = ("grapharc.plugins", "grapharc.runtime", "pydantic", "langchain_core", "langgraph", "typer")
"""What a pytest start anywhere grapharc-core is installed must not import for GraphARC's plugin."""


def test_pytest_finds_the_plugin_through_grapharc_cores_entry_point():
    found = {ep.name: ep for ep in entry_points(group="pytest11")}
    assert found["grapharc"].value == "grapharc.testing.pytest_plugin"
    assert found["grapharc"].dist is not None and found["grapharc"].dist.name == "grapharc-core"


def test_loading_the_plugin_imports_nothing_heavy():
    program = "import json, sys, grapharc.testing.pytest_plugin; print(json.dumps(sorted(sys.modules)))"
    listed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                            timeout=120)
    loaded = json.loads(listed.stdout)
    assert [name for name in loaded if name.startswith(HEAVY)] == []


@pytest.fixture
def nothing_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's environment that loads no plugin at all."""
    monkeypatch.setenv("GRAPHARC_LOAD_PLUGINS", "")


def test_the_host_fixture_is_current_and_ignores_the_users_plugin_switches(nothing_allowed,
                                                                          grapharc_plugins):
    assert isinstance(grapharc_plugins, PluginHost) and get_host() is grapharc_plugins
    assert grapharc_plugins.records["grapharc-tools"].status == "loaded"


def test_the_workdir_fixture_is_the_working_directory_without_grapharc_settings(monkeypatch, request):
    monkeypatch.setenv("GRAPHARC_SESSIONS", "/somewhere/else")
    folder = request.getfixturevalue("grapharc_workdir")
    assert os.getcwd() == str(folder) and "GRAPHARC_SESSIONS" not in os.environ
