"""The docs site: it builds with ``mkdocs build --strict``, a broken link or a missing reference
fails that build, and its generated reference pages cover the code. The pages' examples run in
tests/docs/test_pages.py.
"""

from __future__ import annotations

import html
import importlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from grapharc.cli.main import build_app

ROOT = Path(__file__).resolve().parents[2]


def mkdocs_build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the project at ``project`` into ``site``, as ``make docs`` runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=project, capture_output=True, text=True, timeout=240, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's site, built once for the module."""
    folder = tmp_path_factory.mktemp("site")
    result = mkdocs_build(ROOT, folder)
    assert result.returncode == 0, result.stderr
    return folder


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text()


# -- the build ---------------------------------------------------------------------------------


def copy_of_the_project(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ copied, the sources linked: a project whose pages a test may break."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", project)
    shutil.copytree(ROOT / "docs", project / "docs")
    (project / "grapharc-core").symlink_to(ROOT / "grapharc-core")
    return project


@pytest.fixture(scope="module")
def intact_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project that builds as it is, for each test to break in its own copy."""
    folder = tmp_path_factory.mktemp("intact")
    project = copy_of_the_project(folder)
    assert mkdocs_build(project, folder / "site").returncode == 0
    return project


@pytest.mark.parametrize(("breakage", "named"), [
    ("See [the missing page](no-such-page.md).", "no-such-page.md"),
    ("See [a missing heading](architecture.md#no-such-heading).", "no-such-heading"),
    ("::: grapharc.planner.NoSuchName", "grapharc.planner.NoSuchName"),
], ids=["link", "anchor", "reference"])
def test_a_broken_link_or_a_missing_reference_fails_the_build(breakage, named, intact_copy, tmp_path):
    project = copy_of_the_project(tmp_path)
    assert (project / "mkdocs.yml").read_bytes() == (intact_copy / "mkdocs.yml").read_bytes()
    index = project / "docs" / "index.md"
    index.write_text(f"{index.read_text()}\n{breakage}\n")
    result = mkdocs_build(project, tmp_path / "broken")
    assert result.returncode != 0 and named in result.stderr, result.stderr


def test_every_page_of_the_docs_folder_is_in_the_navigation_and_built(site):
    docs = ROOT / "docs"
    pages = {path.relative_to(docs).with_suffix("").as_posix()
             for path in docs.rglob("*.md") if "hooks" not in path.parts}
    nav = (ROOT / "mkdocs.yml").read_text()
    for name in pages:
        assert f": {name}.md" in nav, name
        is_index = name == "index" or name.endswith("/index")  # built as index.html in its own folder
        built = site / (f"{name}.html" if is_index else f"{name}/index.html")
        assert built.is_file(), name


def test_every_code_block_renders_as_code_not_as_a_paragraph(site):
    """Fences carrying the reference tests' attributes (```toml file=x) need the fence hook."""
    for path in site.rglob("*.html"):
        text = path.read_text()
        assert "<p>```" not in text, path
    policy = page(site, "reference/policy")
    assert '<span class="filename">policy.toml</span>' in policy


# -- the generated reference pages ------------------------------------------------------------


def documented_path(module: str, name: str) -> str:
    """The anchor a name of ``module`` has on the page: a class where it is defined, else in ``module``."""
    package = importlib.import_module(module)
    value: Any = getattr(package, name)
    defined_in = getattr(value, "__module__", module)
    return f"{defined_in}.{name}" if isinstance(value, type) else f"{module}.{name}"


@pytest.mark.parametrize("module", ["grapharc", "grapharc.planner", "grapharc.testing"])
def test_the_python_reference_documents_every_public_name(site, module):
    python = page(site, "reference/python")
    names = [name for name in importlib.import_module(module).__all__ if name != "__version__"]
    assert names
    for name in names:
        anchors = {f'id="{module}.{name}"', f'id="{documented_path(module, name)}"'}
        assert any(anchor in python for anchor in anchors), f"{module}.{name}"


def command_tree(command: Any, path: tuple[str, ...], context: Any) -> Iterator[tuple[str, ...]]:
    """Every command path under ``command``, as Click resolves them (lazy commands built)."""
    yield path
    if hasattr(command, "list_commands"):
        for name in command.list_commands(context):
            child = command.get_command(context, name)
            yield from command_tree(child, (*path, name), child.context_class(child, parent=context))


def help_blocks(site: Path) -> dict[str, str]:
    """The CLI page's help text under each ``grapharc ...`` heading."""
    cli = page(site, "reference/cli")
    found = re.findall(r'<h\d id="[^"]*"><code>(grapharc[^<]*)</code>.*?<pre>.*?<code>(.*?)</code></pre>',
                       cli, re.S)
    return {heading: html.unescape(re.sub(r"<[^>]+>", "", body)) for heading, body in found}


def test_the_cli_reference_has_a_section_for_every_command(site):
    root = typer.main.get_command(build_app())
    expected = {" ".join(path) for path in command_tree(root, ("grapharc",), root.context_class(root))}
    assert len(expected) > 40 and "grapharc db upgrade" in expected  # a plugin's lazy command too
    assert set(help_blocks(site)) == expected


@pytest.mark.parametrize("command", ["grapharc", "grapharc plan", "grapharc session approve",
                                     "grapharc serve", "grapharc db upgrade"])
def test_the_cli_reference_shows_what_help_prints(site, command):
    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run([sys.executable, "-m", "grapharc.cli", *command.split()[1:], "--help"],
                            capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert help_blocks(site)[command].strip() == result.stdout.strip()
