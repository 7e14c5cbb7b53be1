"""Fixtures shared by core's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from grapharc.testing import plugin_host


@pytest.fixture
def clean_workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh working directory with no GRAPHARC_* settings and only core's own plugin loaded,
    so a command sees exactly what the test gives it."""
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("GRAPHARC_") and n != "GRAPHARC_DEBUG"]:
        monkeypatch.delenv(name)
    with plugin_host(installed=False):
        yield tmp_path
