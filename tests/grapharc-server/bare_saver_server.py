"""``grapharc serve`` over a third party's checkpointer that lacks LangGraph's extended ``prune``.

An in-process plugin registers the ``bare:`` scheme: core's SQLite sessions and runs (and no
assistant store, as a plugin written before assistants could be created), and a checkpointer
provider whose sync saver is LangGraph's own ``SqliteSaver`` (base capabilities only), as a
checkpointer plugin written against LangGraph alone would be. The command, its plugins and its API
are otherwise the real ones.

Usage: ``python bare_saver_server.py [grapharc serve options...]`` with ``--sessions bare:DIR``.
"""

from __future__ import annotations

import sqlite3
import sys
import types
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc.cli.main import run
from grapharc.plugins import StoreInfo, hookimpl
from grapharc.sqlite.checkpoints import SqliteCheckpoints, open_sqlite_checkpointer
from grapharc.sqlite.runs import open_run_store
from grapharc.sqlite.sessions import open_session_store
from grapharc.testing import in_process_source, plugin_host


class BareCheckpoints(SqliteCheckpoints):
    """Core's SQLite checkpoints whose sync saver is LangGraph's plain ``SqliteSaver``."""

    def saver(self) -> Any:
        if self._saver is None:
            saver = SqliteSaver(sqlite3.connect(str(self.path), check_same_thread=False))
            saver.setup()
            self._saver = saver  # type: ignore[assignment]
        return self._saver


def open_bare_checkpoints(location: str, kind: str) -> BareCheckpoints:
    """The ``bare:`` checkpoints at ``location``: the file core's ``sqlite:`` would use."""
    return BareCheckpoints(open_sqlite_checkpointer(location, kind).path)


@hookimpl
def register_stores(register: Any) -> None:
    register(StoreInfo(scheme="bare", kinds=frozenset({"sessions"}), factory=open_session_store))
    register(StoreInfo(scheme="bare", kinds=frozenset({"runs"}), factory=open_run_store))
    register(StoreInfo(scheme="bare", kinds=frozenset({"checkpoints"}), factory=open_bare_checkpoints))


if __name__ == "__main__":
    plugin = types.SimpleNamespace(register_stores=register_stores)
    with plugin_host(in_process_source(plugin, name="bare-checkpointer")):
        sys.exit(run(["serve", *sys.argv[1:]]))
