"""Routes and pages go through the service layer (``grapharc.server.service``): no other module of
grapharc-server reads a SessionManager's stores, scanned checkpoints or checkpointer."""

from __future__ import annotations

import ast
from pathlib import Path

import grapharc.server

SERVER = Path(grapharc.server.__file__).parent
SERVICE = SERVER / "service"
INTERNALS = frozenset({"store", "scanned", "checkpointer"})


def test_no_module_outside_the_service_reads_a_managers_internals() -> None:
    reads = [f"{path.relative_to(SERVER)}:{node.lineno}: .{node.attr}"
             for path in sorted(SERVER.rglob("*.py")) if SERVICE not in path.parents
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Attribute) and node.attr in INTERNALS]
    assert reads == []
