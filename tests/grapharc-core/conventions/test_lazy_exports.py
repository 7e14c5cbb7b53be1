"""Every package that exports names lazily does it through one helper, grapharc._lazy.lazy_exports."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = sorted(ROOT.glob("grapharc-*/src/grapharc/**/__init__.py"))
LAZY_PACKAGES = ["grapharc", "grapharc.runtime", "grapharc.planner", "grapharc.policy", "grapharc.session",
                 "grapharc.observe", "grapharc.stdlib", "grapharc.testing", "grapharc.gateway",
                 "grapharc.memory", "grapharc.tools", "grapharc.tools.container"]


def hand_rolled(path: Path) -> list[str]:
    """Module-level ``__getattr__`` / ``__dir__`` functions a package defines itself."""
    return [node.name for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef) and node.name in {"__getattr__", "__dir__"}]


def test_no_package_hand_rolls_its_lazy_exports():
    assert len(PACKAGES) > 10
    rolled = {str(path.relative_to(ROOT)): names for path in PACKAGES if (names := hand_rolled(path))}
    assert rolled == {}


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_lazy_export_resolves_and_is_listed(name):
    package = importlib.import_module(name)
    exported = [attr for attr in package.__all__ if attr != "__version__"]
    assert exported and set(exported) <= set(dir(package))
    for attr in exported:
        assert getattr(package, attr) is not None
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        package.not_exported  # noqa: B018
