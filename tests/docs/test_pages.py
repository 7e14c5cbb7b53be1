"""The README's promises: its examples run and print what it shows; its commands exist."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.planner.surface import registry_from_plugins
from grapharc.plugins.host import core_requirement
from grapharc.testing import in_process_source, plugin_host

pytestmark = pytest.mark.smoke


ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
PRINTED = re.compile(r"```python\n((?:(?!```).)*?)```\n\nprints:\n\n```text\n(.*?)```", re.S)
CONSOLE = re.compile(r"```console\n\$ (grapharc [^\n]*)\n(.*?)```", re.S)


def python_block_after(heading: str) -> str:
    section = README.split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.parametrize(("code", "expected"), PRINTED.findall(README),
                         ids=lambda value: value.splitlines()[0][:40] if "\n" in value else value)
def test_each_python_example_prints_what_the_readme_shows(code, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # and `grapharc` on PATH, as in the virtualenv the README activates
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert out.getvalue() == expected


@pytest.mark.parametrize(("command", "expected"), CONSOLE.findall(README))
def test_each_console_example_prints_what_the_readme_shows(command, expected, tmp_path):
    args = command.split(" ", 1)[1]
    argv = [sys.executable, "-m", "grapharc.cli", *__import__("shlex").split(args)]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.stdout == expected, result.stderr


def test_the_readme_has_examples_to_check():
    assert len(PRINTED.findall(README)) >= 3 and CONSOLE.findall(README)


def test_the_write_your_own_plugin_example_registers_its_kind_and_command():
    module = types.ModuleType("readme_plugin")
    exec(compile(python_block_after("## Write your own plugin"), "README.md", "exec"),
         module.__dict__)
    pyproject = re.search(r"```toml\n(.*?)```", README.split("## Write your own plugin", 1)[1], re.S)
    requires = core_requirement(tomllib.loads(pyproject.group(1))["project"]["dependencies"])
    with plugin_host(in_process_source(module, name="my-grapharc-plugin", core_requires=requires),
                     installed=False) as host:
        assert host.records["my-grapharc-plugin"].status == "loaded"
        spec = registry_from_plugins().get("lookup")
        body = spec.factory(spec)
        assert body(types.SimpleNamespace(goal="q")) == {"answer": "looked up q"}
        result = CliRunner().invoke(build_app(), ["hello"])
        assert result.exit_code == 0 and result.output == "hello from my plugin\n"


def test_the_readme_names_exactly_the_two_make_targets_that_exist():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}: ", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_approval_story_prints_exactly_what_the_readme_shows(tmp_path):
    section = README.split("## Sessions: stop for a person, die, come back", 1)[1]
    command = re.search(r"```sh\n(grapharc demo approval run [^#\n]*?)\s+#", section).group(1)
    shown = re.search(r"The first command prints each step and stops[^\n]*\n\n```text\n(.*?)```",
                      section, re.S).group(1)
    result = subprocess.run([sys.executable, "-m", "grapharc", *command.split()[1:]],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    approval = re.compile(r"ap-[0-9a-f]{12}")
    assert approval.sub("ap-ID", result.stdout) == approval.sub("ap-ID", shown)
