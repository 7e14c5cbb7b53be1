"""The plugin guides (docs/plugins): every code block is the code that runs.

A block marked ``new=NAME kind=KIND`` (with ``file=PATH``) is checked to be exactly the file
``grapharc plugin new NAME --kind KIND`` writes: tests/packaging/test_plugin_skeletons.py
installs those skeletons beside the core wheel and runs their tests. Every other ``file=``
block is written into a fresh folder. Each page's plugin (a skeleton's ``hooks.py``, or a
``PACKAGE/hooks.py`` block) is then loaded in this process as if it were installed, and must
load and register something. The page's ```console ``grapharc`` commands run against that
host and print what the page shows, and so do its ```python blocks followed by "prints:".
Any other shell step must be one of SHELL_STEPS, each of which says where it is exercised.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from grapharc.plugins import PluginHost
from grapharc.plugins.facets import FACETS
from grapharc.plugins.host import core_requirement, supports_this_core
from grapharc.plugins.skeleton import write_skeleton
from grapharc.testing import in_process_source, plugin_host
from grapharc.testing.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
GUIDES = ROOT / "docs" / "plugins"
PAGES = sorted(path.name for path in GUIDES.glob("*.md"))
BLOCK = re.compile(r"^ *```(\w+)([^\n]*)\n(.*?)^ *```\n(?:\nprints:\n\n```text\n(.*?)```\n)?", re.S | re.M)
SHELL_STEPS = {
    "cd acme-echo": "the folder the tutorial's first command wrote",
    "pip install -e '.[test]'": "tests/packaging/test_plugin_skeletons.py installs every skeleton from its "
                                "folder (uv pip, not editable) with pytest",
    "pytest": "tests/packaging/test_plugin_skeletons.py runs every skeleton's own tests",
    "python -m build": "tests/packaging/test_plugin_skeletons.py builds the backend skeleton's sdist and "
                       "wheel (uv build: the same PEP 517 backend)",
    "twine upload dist/*": "not run: it would publish",
}
HOOKS = {"index.md": ("acme_echo",), "node-kinds.md": ("acme_shout",), "executors.md": ("acme_runner",),
         "tools.md": ("acme_words", "acme_notes"), "stores.md": ("acme_files",),
         "policy-sources.md": ("acme_team_policy",), "commands.md": ("acme_hello",),
         "model-backends.md": (), "testing.md": ()}
"""The packages whose hooks each page's examples run with, beside core's own."""


@dataclass(frozen=True)
class Block:
    lang: str
    attributes: dict[str, str]
    body: str
    prints: str | None


def blocks(page: str) -> list[Block]:
    found = []
    for lang, info, body, prints in BLOCK.findall((GUIDES / page).read_text()):
        indent = len(body) - len(body.lstrip(" ")) if body.startswith(" ") else 0
        body = "".join(line[indent:] for line in body.splitlines(keepends=True))
        words = dict(word.split("=", 1) for word in info.split() if "=" in word)
        found.append(Block(lang, words, body, prints or None))
    return found


@pytest.fixture
def page_host(request: pytest.FixtureRequest, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    """The page's plugin loaded in this process as if installed, in a fresh working folder."""
    page = request.node.callspec.params["page"]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for block in blocks(page):
        if "file" in block.attributes and "new" not in block.attributes:
            target = tmp_path / "own" / block.attributes["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            (target.parent / "__init__.py").touch()
            target.write_text(block.body)
    skeletons = {(b.attributes["new"], b.attributes["kind"]) for b in blocks(page) if "new" in b.attributes}
    for name, kind in skeletons:
        write_skeleton(name, kind, tmp_path / "skeletons" / name)
        monkeypatch.syspath_prepend(str(tmp_path / "skeletons" / name / "src"))
    monkeypatch.syspath_prepend(str(tmp_path / "own"))
    before = set(sys.modules)
    sources = [in_process_source(importlib.import_module(f"{package}.hooks"), name=package.replace("_", "-"))
               for package in HOOKS[page]]
    try:
        with plugin_host(*sources, installed=False) as host:
            yield host
    finally:  # each page's packages are forgotten, so no page sees another's
        for name in set(sys.modules) - before:
            del sys.modules[name]


def test_every_guide_is_checked_here():
    assert sorted(HOOKS) == PAGES


@pytest.mark.parametrize("page", PAGES)
def test_every_skeleton_block_is_the_file_grapharc_plugin_new_writes(page, tmp_path):
    for block in blocks(page):
        if "new" in block.attributes:
            folder = tmp_path / block.attributes["new"]
            if not folder.exists():
                write_skeleton(block.attributes["new"], block.attributes["kind"], folder)
            assert (folder / block.attributes["file"]).read_text() == block.body, block.attributes


@pytest.mark.parametrize("page", PAGES)
def test_every_toml_block_parses_and_a_project_declares_a_range_this_core_accepts(page):
    for block in blocks(page):
        if block.lang == "toml":
            document = tomllib.loads(block.body)
            dependencies = document.get("dependencies", document.get("project", {}).get("dependencies"))
            if dependencies is not None:
                assert supports_this_core(core_requirement(dependencies)) is None


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_plugin_loads_registers_and_its_examples_print_what_the_page_shows(page, page_host):
    for facet in FACETS:
        page_host.registry(facet)
    page_host.commands()
    for package in HOOKS[page]:
        record = page_host.records[package.replace("_", "-")]
        assert (record.status, record.errors) == ("loaded", []) and record.registered, package
    for block in blocks(page):
        if block.lang == "console":
            for command, shown in commands(block.body):
                if command.startswith("grapharc "):
                    result = run_cli(command.split()[1:])
                    assert (result.exit_code, result.stdout) == (0, shown), result.stderr
                else:
                    assert command in SHELL_STEPS and not shown, command
        elif block.lang == "python" and block.prints is not None:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block.body, page, "exec"), {"__name__": "guide_example"})
            assert out.getvalue() == block.prints


def commands(console: str) -> list[tuple[str, str]]:
    """Each ``$ command`` of a console block with the output shown under it."""
    found: list[tuple[str, str]] = []
    for line in console.splitlines(keepends=True):
        if line.startswith("$ "):
            found.append((line[2:].strip(), ""))
        else:
            found[-1] = (found[-1][0], found[-1][1] + line)
    return found
