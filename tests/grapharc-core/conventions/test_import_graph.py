"""The import contracts of pyproject.toml (core's planes, no core-to-plugin and no plugin-to-plugin
import, grapharc.cli private to the CLI) hold, checked by import-linter over every distribution,
run as ``make lint`` runs it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).parents[3]
PLUGIN_PACKAGES = ("grapharc.gateway", "grapharc.tools", "grapharc.server", "grapharc.postgres",
                   "grapharc.memory.sqlite", "grapharc.memory.ladybug")


def lint_imports(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's command on ``config``, after importing grapharc (as the Makefile does)."""
    code = ("import grapharc.memory, sys; from importlinter.cli import lint_imports_command; "
            f"sys.argv = ['lint-imports', '--no-cache', '--no-logo', {str(config)!r}]; "
            "lint_imports_command()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_every_import_contract_is_kept(tmp_path):
    result = lint_imports(ROOT / "pyproject.toml", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


def test_a_breach_is_reported_naming_the_import(tmp_path):
    """Layers drawn upside down (runtime above the sessions that use it) are broken, and the
    report names a real import: the linter reads this tree."""
    config = tmp_path / "upside-down.toml"
    config.write_text('[tool.importlinter]\nroot_packages = ["grapharc"]\n\n'
                      '[[tool.importlinter.contracts]]\nid = "upside-down"\nname = "upside down"\n'
                      'type = "layers"\ncontainers = ["grapharc"]\nlayers = ["runtime", "session"]\n')
    result = lint_imports(config, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "grapharc.session." in result.stdout and "-> grapharc.runtime." in result.stdout


@pytest.mark.parametrize("name", PLUGIN_PACKAGES)
def test_the_package_spec_holds_every_distributions_folder_so_tools_see_the_plugins(name):
    """Core extends its package's path in place, so ``__spec__`` (what import-linter and other
    tools read) lists the plugins' folders as ``__path__`` does."""
    assert importlib.util.find_spec(name) is not None
    package = sys.modules[name.rpartition(".")[0]]
    assert package.__spec__.submodule_search_locations == package.__path__
