"""Commands declared lazily: ``grapharc --help`` imports no command module, and shows the same
lines the built commands show."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from grapharc.cli.lazy import DeferredCommand, LazyGroup, lazy_command
from grapharc.cli.main import build_app
from grapharc.testing.cli import commands, run_cli

COMMAND_MODULES = ("grapharc.cli.agent_command", "grapharc.cli.demo_commands",
                   "grapharc.cli.governance_commands", "grapharc.cli.memory_commands",
                   "grapharc.cli.observe_commands", "grapharc.cli.session_commands",
                   "grapharc.cli.options", "grapharc.server.cli", "grapharc.postgres.cli")
HEAVY = ("langgraph", "pydantic", "asyncio")


def modules_after(*argv: str) -> set[str]:
    """The modules a fresh ``grapharc ARGV`` process has imported once it is done."""
    code = ("import json, sys\nfrom grapharc.cli.main import run\nrun(sys.argv[1:])\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


def test_root_help_imports_no_command_module_nor_langgraph():
    loaded = modules_after("--help")
    assert not loaded.intersection(COMMAND_MODULES)
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}


def test_a_command_imports_its_own_family_only():
    loaded = modules_after("demo", "--help")
    assert "grapharc.cli.demo_commands" in loaded
    assert not loaded.intersection({"grapharc.cli.agent_command", "grapharc.server.cli",
                                    "grapharc.postgres.cli", "grapharc.cli.memory_commands"})


def test_each_declared_help_line_is_the_built_commands():
    group = typer.main.get_command(build_app())
    assert isinstance(group, LazyGroup)
    context = typer.Context(group, info_name="grapharc")
    deferred = [name for name, command in group.commands.items() if isinstance(command, DeferredCommand)]
    assert {"serve", "db", "demo", "agent"} <= set(deferred)
    listed = group.get_help(context)
    for name in group.list_commands(context):
        group.get_command(context, name)
    assert not any(isinstance(command, DeferredCommand) for command in group.commands.values())
    assert group.get_help(context) == listed


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of a third-party plugin, importable, that adds a ``hello`` command."""
    name = f"lazy_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "def add_hello(app):\n"
        "    @app.command('hello')\n"
        "    def hello() -> None:\n"
        "        '''Say hello.'''\n"
        "        print('hello from a lazy plugin')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_declared_command_imports_its_module_only_when_it_runs(plugin_module: str):
    app = typer.Typer(cls=LazyGroup, rich_markup_mode=None)
    app.callback()(lambda: None)
    lazy_command(app, "hello", f"{plugin_module}:add_hello", "Say hello.")
    runner = CliRunner()
    listed = runner.invoke(app, ["--help"])
    assert "hello  Say hello." in listed.output and plugin_module not in sys.modules
    ran = runner.invoke(app, ["hello"])
    assert ran.exit_code == 0 and ran.output == "hello from a lazy plugin\n"
    assert plugin_module in sys.modules


def test_a_target_that_adds_no_such_command_is_named(plugin_module: str):
    app = typer.Typer(cls=LazyGroup, rich_markup_mode=None)
    app.callback()(lambda: None)
    lazy_command(app, "goodbye", f"{plugin_module}:add_hello", "Say goodbye.")
    result = CliRunner().invoke(app, ["goodbye"])
    assert isinstance(result.exception, LookupError)
    assert f"{plugin_module}:add_hello added no command named 'goodbye'" in str(result.exception)


RAW_TYPE = re.compile(r"<(?:str|int|float|bool|Path|list\[[^\]]*\])>")


def test_no_help_shows_a_python_type_for_a_placeholder():
    """Typer shows an undeclared placeholder by its annotation (--allow <list[str]>, TRACE <str>)."""
    shown = {" ".join(words): RAW_TYPE.findall(command.get_help(command.make_context(
        words[-1], [], resilient_parsing=True))) for words, command in commands(build_app())}
    assert {words: found for words, found in shown.items() if found} == {}
    assert "--allow GLOB" in run_cli(["agent", "--help"]).stdout
