"""Routes and pages go through the service layer (``grapharc.server.service``): no other module of
grapharc-server reads a SessionManager's stores, scanned checkpoints or checkpointer.

A manager is reached by a name or attribute holding ``manager`` (``manager``, ``ctx.manager``,
``self._manager``); ``store`` alone is too common a name to ban (the long-term store, a webhook
store, the auth file's store grants are not the manager's)."""

from __future__ import annotations

import ast
from pathlib import Path

import grapharc.server

SERVER = Path(grapharc.server.__file__).parent
SERVICE = SERVER / "service"
INTERNALS = frozenset({"store", "scanned", "checkpointer"})


def _holder(node: ast.expr) -> str:
    """The last name of the expression an attribute is read from (``ctx.manager`` -> ``manager``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def managers_internals_read(source: str) -> list[tuple[int, str]]:
    """Each line of ``source`` reading a manager's internals, and the attribute read."""
    return [(node.lineno, node.attr) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr in INTERNALS
            and "manager" in _holder(node.value).lower()]


def test_the_check_finds_a_managers_internals_however_it_is_reached() -> None:
    source = ("a = ctx.manager.store\nb = manager.checkpointer\nc = self._manager.scanned\n"
              "d = app.state.store\n")
    assert managers_internals_read(source) == [(1, "store"), (2, "checkpointer"), (3, "scanned")]


def test_no_module_outside_the_service_reads_a_managers_internals() -> None:
    reads = [f"{path.relative_to(SERVER)}:{line}: .{attr}"
             for path in sorted(SERVER.rglob("*.py")) if SERVICE not in path.parents
             for line, attr in managers_internals_read(path.read_text(encoding="utf-8"))]
    assert reads == []
