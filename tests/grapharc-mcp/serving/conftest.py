"""Fixtures for ``grapharc mcp serve``'s tests: the helper modules beside this file.

Appended to the path, not put first: tests/grapharc-mcp's own tests import their ``conftest`` by
name, which this folder's must not shadow."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).parent))  # mcp_serve_process, mcp_serve_graphs
