"""Plugins installed as distributions (entry points found through their metadata): conflicts,
strict mode, core-version ranges and the load list, seen from the ``grapharc`` command.

Each test installs distributions the way an installer leaves them, a ``.dist-info``
folder with ``METADATA`` and ``entry_points.txt`` on the path, around the fixture plugin
in ``tests/fixtures`` and small rivals of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc import __version__

FIXTURE_SRC = Path(__file__).resolve().parents[2] / "fixtures" / "grapharc-fixture-plugin" / "src"
RIVAL_HOOKS = "from grapharc_fixture_plugin.hooks import register_commands, register_node_kinds\n"
BROKEN_HOOKS = "raise RuntimeError('the rival cannot start')\n"


def install(site: Path, name: str, module: str, *, requires: str | None = ">=0.1,<0.2",
            source: str | None = None) -> None:
    """Leave ``name`` installed in ``site`` with an entry point naming ``module``."""
    info = site / f"{name.replace('-', '_')}-1.0.0.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n"
    if requires is not None:
        metadata += f"Requires-Dist: grapharc-core{requires}\n"
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text(f"[grapharc]\n{name} = {module}\n")
    if source is not None:
        (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site directory holding the fixture plugin, installed."""
    install(tmp_path, "grapharc-fixture-plugin", "grapharc_fixture_plugin.hooks")
    return tmp_path


def grapharc(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(site), str(FIXTURE_SRC), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path, **env}, timeout=120)


def listed(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    return {d["name"]: d for d in json.loads(result.stdout)["distributions"]}


def test_a_rival_registering_the_fixtures_kind_and_command_is_listed_as_a_conflict_naming_both(site):
    install(site, "grapharc-fixture-rival", "grapharc_fixture_rival", source=RIVAL_HOOKS)
    result = grapharc(site, "plugins", "--json")
    assert result.returncode == 1, result.stderr
    plugins = listed(result)
    assert plugins["grapharc-fixture-plugin"]["status"] == "loaded"
    rival = plugins["grapharc-fixture-rival"]
    assert rival["status"] == "conflict" and rival["registered"] == {}
    both = "is registered by both grapharc-fixture-plugin and grapharc-fixture-rival"
    assert {error.split(" is registered")[0] for error in rival["errors"] if both in error} == {
        "node kind 'triage_ticket'", "command 'fixture-hello'"}
    assert all(d["status"] == "loaded" for name, d in plugins.items() if name != "grapharc-fixture-rival")


def test_everything_else_works_beside_a_conflict(site):
    install(site, "grapharc-fixture-rival", "grapharc_fixture_rival", source=RIVAL_HOOKS)
    hello = grapharc(site, "fixture-hello", "--json")
    assert hello.returncode == 0 and json.loads(hello.stdout) == {"hello": "from grapharc-fixture-plugin"}
    assert grapharc(site, "version").stdout == f"grapharc {__version__}\n"


def test_strict_mode_turns_the_conflict_into_an_error_naming_both(site):
    install(site, "grapharc-fixture-rival", "grapharc_fixture_rival", source=RIVAL_HOOKS)
    result = grapharc(site, "plugins", "--json", GRAPHARC_STRICT_PLUGINS="1")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "DuplicateRegistrationError"
    assert "grapharc-fixture-plugin and grapharc-fixture-rival" in error["message"]


def test_a_plugin_that_raises_on_import_is_reported_and_in_strict_mode_named_in_the_error(site):
    install(site, "grapharc-fixture-broken", "grapharc_fixture_broken", source=BROKEN_HOOKS)
    reported = grapharc(site, "plugins", "--json")
    assert reported.returncode == 1
    broken = listed(reported)["grapharc-fixture-broken"]
    assert broken["status"] == "failed" and "the rival cannot start" in broken["errors"][0]
    strict = grapharc(site, "plugins", GRAPHARC_STRICT_PLUGINS="1")
    assert strict.returncode == 2 and strict.stdout == ""
    assert strict.stderr.startswith("error: grapharc-fixture-broken: could not load grapharc_fixture_broken")
    assert "InternalError" not in strict.stderr and "Traceback" not in strict.stderr


def test_a_plugin_whose_core_dependency_excludes_this_core_is_incompatible_and_never_imported(site):
    install(site, "grapharc-fixture-future", "grapharc_fixture_future", requires=">=99",
            source=BROKEN_HOOKS)
    future = listed(grapharc(site, "plugins", "--json"))["grapharc-fixture-future"]
    assert future["status"] == "incompatible"
    assert future["errors"] == [f"grapharc-fixture-future supports grapharc-core >=99, but this is "
                                f"grapharc-core {__version__}"]


def test_an_unknown_name_in_the_load_list_is_named_on_stderr(site):
    result = grapharc(site, "plugins", "--json", GRAPHARC_LOAD_PLUGINS="grapharc-fixture-plugn")
    assert result.returncode == 0
    assert "warning: GRAPHARC_LOAD_PLUGINS names 'grapharc-fixture-plugn', which is not an installed" \
        in result.stderr
    assert listed(result)["grapharc-fixture-plugin"]["status"] == "disabled"
    strict = grapharc(site, "plugins", "--json", GRAPHARC_LOAD_PLUGINS="nonexistent",
                      GRAPHARC_STRICT_PLUGINS="1")
    assert strict.returncode == 2
    assert json.loads(strict.stdout)["error"]["code"] == "UnknownPluginError"


EXITING_IMPORT = "import sys\nsys.exit(0)\n"
EXITING_HOOK = """\
import sys
from grapharc.plugins import hookimpl

@hookimpl
def register_node_kinds(register):
    sys.exit(0)
"""
INTERRUPTED_HOOK = EXITING_HOOK.replace("sys.exit(0)", "raise KeyboardInterrupt")
EXITING_FACTORY = """\
from grapharc.plugins import StoreInfo, hookimpl

@hookimpl
def register_stores(register):
    register(StoreInfo(scheme="leaving", kinds=frozenset({"claims"}),
                       factory="grapharc_fixture_factory:make"))
"""


@pytest.mark.parametrize(("source", "said"), [
    (EXITING_IMPORT, "could not load grapharc_fixture_exits: SystemExit(0)"),
    (EXITING_HOOK, "hook register_node_kinds raised SystemExit(0)"),
], ids=["on-import", "in-a-hook"])
def test_a_plugin_calling_sys_exit_is_a_failed_plugin_not_a_silent_exit_0(site, source, said):
    install(site, "grapharc-fixture-exits", "grapharc_fixture_exits", source=source)
    reported = grapharc(site, "plugins", "--json")
    assert reported.returncode == 1, reported.stderr  # a failed plugin, like any other exception
    exits = listed(reported)["grapharc-fixture-exits"]
    assert exits["status"] == "failed" and said in exits["errors"][0]
    assert grapharc(site, "version").stdout == f"grapharc {__version__}\n"  # the rest keep working
    strict = grapharc(site, "kinds", "--json", GRAPHARC_STRICT_PLUGINS="1")
    assert strict.returncode == 2, strict.stderr
    error = json.loads(strict.stdout)["error"]
    assert error["code"] == "PluginFailedError" and error["message"].startswith("grapharc-fixture-exits: ")
    assert said in error["message"] and "Traceback" not in strict.stderr


def test_a_plugin_factory_whose_module_calls_sys_exit_is_an_error_naming_the_plugin(site):
    install(site, "grapharc-fixture-factory", "grapharc_fixture_factory_hooks", source=EXITING_FACTORY)
    (site / "grapharc_fixture_factory.py").write_text(EXITING_IMPORT)
    result = grapharc(site, "memory", "add", "a", "b", "c", "--source", "s", "--memory", "leaving:x",
                      "--json")
    assert result.returncode == 2, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "PluginFactoryError"
    assert error["message"] == ("grapharc-fixture-factory's factory 'grapharc_fixture_factory:make' "
                                "cannot be imported: SystemExit(0): it tried to end the process")


def test_a_keyboard_interrupt_in_a_plugin_hook_still_interrupts_the_command(site):
    install(site, "grapharc-fixture-interrupted", "grapharc_fixture_interrupted", source=INTERRUPTED_HOOK)
    result = grapharc(site, "plugins", "--json")
    assert result.returncode == 130 and result.stdout == ""  # Ctrl+C's status, not a failed plugin's report
