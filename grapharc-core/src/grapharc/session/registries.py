"""Operators' registries: ``module:attr`` functions that register graphs on a SessionManager.

``grapharc serve`` and ``grapharc mcp serve`` both take ``--registry module:attr``; plugins never
import each other, so the loader they share lives here. An error of the registry's own code (on
import or when called, ``SystemExit`` included) is named as the registry's to fix, never shown as a
GraphARC bug or allowed to end the process with no word. What its code prints goes to stderr:
stdout is the command's own (one ``--json`` document, or ``mcp serve``'s stdio transport).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import redirect_stdout

from grapharc.errors import GraphARCError
from grapharc.plugins.foreign import FOREIGN_FAILURES, described
from grapharc.session.manager import SessionManager

Registrar = Callable[[SessionManager], None]
"""A function that registers graphs on a SessionManager."""


class RegistryError(GraphARCError):
    """A ``--registry`` that cannot be loaded or called, or that registered nothing to serve."""


def load_registry(spec: str) -> Registrar:
    """``module:attr`` as the callable it names (``RegistryError`` naming what is wrong)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise RegistryError(f"registry {spec!r} is not module:attr",
                            hint="e.g. --registry grapharc.examples.approval:register_credit_graph")
    try:
        with redirect_stdout(sys.stderr):
            found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise RegistryError(f"registry {spec!r} cannot be loaded: {exc}",
                            hint="name a module on this interpreter's path and a function in it") from None
    except FOREIGN_FAILURES as exc:  # its module's own code failed (or called sys.exit) on import
        raise RegistryError(f"registry {spec!r} cannot be loaded: importing it raised {described(exc)}",
                            hint=f"python -c 'import {module_name}' shows the traceback") from exc
    if not callable(found):
        raise RegistryError(f"registry {spec!r} is not callable",
                            hint="it must be a function taking the SessionManager and registering graphs")
    return found  # type: ignore[no-any-return]


def register_from(spec: str, register: Registrar, manager: SessionManager) -> None:
    """Call the operator's registry ``spec`` on ``manager``; GraphARC's own refusals pass as they
    are, anything else its code raises is a ``RegistryError`` naming it."""
    try:
        with redirect_stdout(sys.stderr):
            register(manager)
    except GraphARCError:
        raise  # GraphARC refused what it registered, and says why
    except FOREIGN_FAILURES as exc:  # SystemExit too: it would end the process with no word
        raise RegistryError(f"registry {spec!r} failed: {described(exc)}",
                            hint="it is called with the SessionManager and registers graphs on it; "
                                 "run it in Python to see the traceback") from exc
