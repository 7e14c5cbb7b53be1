"""The README's promises: its plugin example runs, and its two commands are the Makefile's."""

from __future__ import annotations

import re
import types
from pathlib import Path

from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.planner import NodeRegistry
from grapharc.testing import in_process_source, plugin_host

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def python_block_after(heading: str) -> str:
    section = README.split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_write_your_own_plugin_example_registers_its_kind_and_command():
    module = types.ModuleType("readme_plugin")
    exec(compile(python_block_after("## Write your own plugin"), "README.md", "exec"),
         module.__dict__)
    with plugin_host(in_process_source(module, name="my-grapharc-plugin", core_requires=None),
                     installed=False) as host:
        assert host.records["my-grapharc-plugin"].status == "loaded"
        spec = NodeRegistry.from_plugins().get("lookup")
        body = spec.factory(spec)
        assert body(types.SimpleNamespace(question="q")) == {"answer": "looked up q"}
        result = CliRunner().invoke(build_app(), ["hello"])
        assert result.exit_code == 0 and result.output == "hello from my plugin\n"


def test_the_readme_names_exactly_the_two_make_targets_that_exist():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}: ", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
