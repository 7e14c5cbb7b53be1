"""One shared version, and a clear message for a plugin package that is not installed."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

import grapharc
from grapharc._missing import PLUGIN_PACKAGES, MissingPluginFinder
from grapharc.plugins import discover_sources

ROOT = Path(__file__).resolve().parents[3]
DISTRIBUTIONS = ["grapharc-core", *sorted(path.parent.name for path in ROOT.glob("grapharc-*/pyproject.toml")
                                          if path.parent.name != "grapharc-core")]
"""Every distribution in the workspace, core first: a new one is held to the shared version unlisted."""


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_every_distribution_carries_the_module_version(dist):
    project = tomllib.loads((ROOT / dist / "pyproject.toml").read_text())["project"]
    assert project["version"] == grapharc.__version__
    assert project["license"] == "MIT" and project["requires-python"] == ">=3.11"
    assert list(project["entry-points"]["grapharc"]) == [dist]


@pytest.mark.parametrize("dist", DISTRIBUTIONS[1:])
def test_plugins_pin_the_core_they_were_released_with(dist):
    project = tomllib.loads((ROOT / dist / "pyproject.toml").read_text())["project"]
    assert f"grapharc-core=={grapharc.__version__}" in project["dependencies"]


@pytest.mark.parametrize("dist", DISTRIBUTIONS[1:])
def test_the_core_a_plugin_supports_is_declared_once_by_its_core_dependency(dist):
    source = {source.distribution: source for source in discover_sources()}[dist]
    assert source.requires == f"=={grapharc.__version__}"
    assert not hasattr(importlib.import_module(source.module), "GRAPHARC_CORE_REQUIRES")


@pytest.mark.parametrize(("module", "dist"), sorted(PLUGIN_PACKAGES.items()))
def test_a_missing_plugin_package_names_the_distribution_to_install(module, dist):
    with pytest.raises(ModuleNotFoundError, match=f"pip install ./{dist}"):
        MissingPluginFinder.find_spec(module)


def test_the_missing_plugin_finder_ignores_everything_else():
    assert MissingPluginFinder.find_spec("grapharc.not_a_plugin") is None


def test_discovery_parses_each_plugin_distributions_metadata_once(monkeypatch):
    import importlib_metadata

    parsed: list[str] = []
    metadata = importlib_metadata.Distribution.metadata

    def counted(dist):
        parsed.append(dist._normalized_name)
        return metadata.fget(dist)

    monkeypatch.setattr(importlib_metadata.Distribution, "metadata", property(counted))
    sources = discover_sources()
    assert {source.distribution for source in sources} >= set(DISTRIBUTIONS)
    assert len(parsed) == len(sources)  # name, version and requires from one parse
