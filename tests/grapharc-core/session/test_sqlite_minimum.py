"""An SQLite too old for the stores' statements is refused when a store opens, naming the version
found and the one needed, before anything is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from grapharc.errors import GraphARCError
from grapharc.stores import open_store


@pytest.mark.parametrize("kind", ["sessions", "runs"])
def test_an_sqlite_without_returning_is_refused_naming_both_versions(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 34, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.34.1")
    with pytest.raises(GraphARCError) as refused:
        open_store(f"sqlite:{tmp_path / 'sessions'}", kind=kind)
    assert "SQLite 3.34.1" in str(refused.value) and "3.35.0 or newer" in str(refused.value)
    assert "newer SQLite" in refused.value.hint
    assert list(tmp_path.iterdir()) == []  # nothing made

