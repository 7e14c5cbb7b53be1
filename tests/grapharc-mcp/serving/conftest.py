"""Fixtures for ``grapharc mcp serve``'s tests: the helper modules beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # mcp_serve_process, mcp_serve_graphs
