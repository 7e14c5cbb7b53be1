"""Worker A of the streaming test: ``python stream_child.py URI THREAD`` runs the created thread's
turn (the session tests' ``chain`` graph) in this process and prints its final status."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grapharc-core" / "session"))

from session_graphs import register_all

from grapharc.session import SessionManager

uri, thread = sys.argv[1:3]
manager = SessionManager(uri)
register_all(manager)
try:
    print(manager.run(thread).status)
finally:
    manager.close()
