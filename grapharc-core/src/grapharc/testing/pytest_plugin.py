"""GraphARC's pytest plugin: fixtures a plugin's own tests (and the conformance kits) stand on.

pytest loads it wherever grapharc-core is installed (entry point ``pytest11``), so importing
it must cost nothing but pytest: GraphARC itself is imported inside the fixtures, when a test
asks for one. The kits are base classes (``grapharc.testing.backend_kit.ModelBackendConformance``
and the others): a plugin's test subclasses one and supplies what it builds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from grapharc.plugins import PluginHost


@pytest.fixture
def grapharc_plugins() -> Iterator[PluginHost]:
    """A plugin host discovered afresh from every installed distribution (no discovery cache;
    ``GRAPHARC_LOAD_PLUGINS`` and strict mode do not apply), current for the test: ``get_model``,
    ``open_store`` and the CLI use it. The host the process had is put back afterwards."""
    from grapharc.plugins import PluginHost, set_host
    from grapharc.plugins.host import discover_sources

    host = PluginHost(discover_sources())
    previous = set_host(host)
    try:
        yield host
    finally:
        set_host(previous)


@pytest.fixture
def grapharc_workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh folder made the working directory, with every ``GRAPHARC_*`` setting of the
    environment removed: a command run there reads no one's grapharc.toml or variables."""
    import os

    for variable in [name for name in os.environ if name.startswith("GRAPHARC_")]:
        monkeypatch.delenv(variable)
    monkeypatch.chdir(tmp_path)
    return tmp_path
