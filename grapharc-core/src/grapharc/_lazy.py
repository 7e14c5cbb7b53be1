"""PEP 562 lazy exports: a package names what it exports and where each name lives.

Importing the package then costs nothing for the names nobody uses, which keeps
``import grapharc.<plugin>`` and ``grapharc --help`` cheap. Used by core's
packages and by the plugins that ship with it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any],
                                                                   Callable[[], list[str]]]:
    """A ``__getattr__`` and ``__dir__`` for ``package`` that import each export on first use."""

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
