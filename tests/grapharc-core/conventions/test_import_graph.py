"""The layers' promises about imports: the plugin layer is the bottom one, and the planner
and policy packages do not import each other in a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import grapharc.plugins

pytestmark = pytest.mark.smoke

PLUGINS_DIR = Path(grapharc.plugins.__file__).parent
BOTTOM_LAYER_MAY_IMPORT = ("grapharc.plugins", "grapharc.errors", "grapharc._version")


def imported_modules(path: Path) -> set[str]:
    """Every ``grapharc`` module a file imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return {name for name in names if name.split(".")[0] == "grapharc"}


def loaded_after(code: str) -> list[str]:
    """The ``grapharc`` modules a fresh interpreter has loaded after running ``code``."""
    probe = code + "\nimport sys\nprint('\\n'.join(m for m in sys.modules if m.startswith('grapharc')))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.parametrize("path", sorted(PLUGINS_DIR.glob("*.py")), ids=lambda path: path.name)
def test_no_module_of_the_plugin_layer_imports_a_layer_above_it(path):
    above = {name for name in imported_modules(path)
             if not any(name == allowed or name.startswith(allowed + ".")
                        for allowed in BOTTOM_LAYER_MAY_IMPORT)}
    assert above == set()


def test_importing_the_plugin_layer_and_its_report_loads_no_planner_policy_or_cli_module():
    loaded = loaded_after("import grapharc.plugins, grapharc.plugins.report")
    upper = [name for name in loaded
             if name.split(".")[1:2] and name.split(".")[1] in {"planner", "policy", "cli"}]
    assert upper == []


def test_importing_every_planner_module_loads_no_policy_module():
    loaded = loaded_after(
        "import importlib, pkgutil, grapharc.planner\n"
        "for module in pkgutil.iter_modules(grapharc.planner.__path__, 'grapharc.planner.'):\n"
        "    importlib.import_module(module.name)")
    assert "grapharc.planner.admission" in loaded
    assert [name for name in loaded if name.startswith("grapharc.policy")] == []
