"""Breaks one module in every Python process started with this folder on PYTHONPATH.

The benchmark tests put this folder first on PYTHONPATH and set ``GRAPHARC_SABOTAGE_MODULE``
(a module name) and ``GRAPHARC_SABOTAGE_CODE`` (Python run in that module's namespace right after
it is loaded), so the work under a benchmark fails in the benchmark itself and in every child it
starts, and the test can see the benchmark refuse to print figures for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any

MODULE = os.environ.get("GRAPHARC_SABOTAGE_MODULE", "")
CODE = os.environ.get("GRAPHARC_SABOTAGE_CODE", "")


class _Saboteur(importlib.abc.MetaPathFinder):
    """Finds ``MODULE`` through the other finders and runs ``CODE`` in it once it is loaded."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    """The module's own loader, then ``CODE``."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        exec(CODE, module.__dict__)  # the test's own sabotage, by design


if MODULE and CODE:
    sys.meta_path.insert(0, _Saboteur())
