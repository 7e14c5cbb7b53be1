"""The discovery cache answers as a fresh scan would: it is reused only while no distribution on
``sys.path`` was installed, removed or changed, and a ``grapharc`` started right after a plugin's
install sees the plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.plugins import discovery_cache
from grapharc.plugins.discovery_cache import cache_file, cached_sources

FIXTURE_SRC = Path(__file__).resolve().parents[2] / "fixtures" / "grapharc-fixture-plugin" / "src"
RIVAL_HOOKS = "from grapharc_fixture_plugin.hooks import register_commands\n"


def install(site: Path, name: str, module: str) -> Path:
    """Leave ``name`` installed in ``site`` as an installer does; return its metadata folder."""
    info = site / f"{name.replace('-', '_')}-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n"
                                   "Requires-Dist: grapharc-core>=0.1,<0.2\n")
    (info / "entry_points.txt").write_text(f"[grapharc]\n{name} = {module}\n")
    return info


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """A cache folder of this test's own, and a count of the full scans made."""
    monkeypatch.setenv("GRAPHARC_CACHE_DIR", str(tmp_path / "cache"))
    counted: list[int] = []
    scan = discovery_cache.discover_sources

    def counting_scan():  # type: ignore[no-untyped-def]
        counted.append(1)
        return scan()

    monkeypatch.setattr(discovery_cache, "discover_sources", counting_scan)
    return counted


def names() -> set[str]:
    return {source.distribution for source in cached_sources()}


def test_a_second_start_with_nothing_installed_since_reads_the_cache(scans):
    first = names()
    assert names() == first and len(scans) == 1
    assert "grapharc-core" in first


def test_a_plugin_installed_after_the_cache_was_saved_is_found(scans, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert "grapharc-cached-late" not in names()
    install(site, "grapharc-cached-late", "grapharc_cached_late")
    assert "grapharc-cached-late" in names() and len(scans) == 2


def test_a_plugin_removed_or_rewritten_in_place_is_seen(scans, tmp_path, monkeypatch):
    site = tmp_path / "site"
    monkeypatch.syspath_prepend(str(site))
    info = install(site, "grapharc-cached-moving", "grapharc_cached_one")
    assert {s.module for s in cached_sources() if s.distribution == "grapharc-cached-moving"} == {
        "grapharc_cached_one"}
    (info / "entry_points.txt").write_text("[grapharc]\ngrapharc-cached-moving = grapharc_cached_two_\n")
    assert {s.module for s in cached_sources() if s.distribution == "grapharc-cached-moving"} == {
        "grapharc_cached_two_"}
    for file in info.iterdir():
        file.unlink()
    info.rmdir()
    assert "grapharc-cached-moving" not in names() and len(scans) == 3


def test_an_unreadable_cache_file_is_a_scan_and_is_replaced(scans):
    cache_file().parent.mkdir(parents=True)
    cache_file().write_text("{not json")
    assert "grapharc-core" in names()
    assert json.loads(cache_file().read_text())[0]["sources"]  # saved again, readable
    assert "grapharc-core" in names() and len(scans) == 1


def test_starts_with_different_paths_each_keep_their_scan(scans, tmp_path, monkeypatch):
    names()
    started_with = list(sys.path)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "elsewhere"), *started_with])
    names()
    monkeypatch.setattr(sys, "path", started_with)
    names()
    assert len(scans) == 2


def test_the_cached_load_imports_the_entry_points_object():
    assert discovery_cache.load_reference("grapharc.plugins:hookimpl") is __import__(
        "grapharc.plugins").plugins.hookimpl


def test_the_grapharc_command_started_after_an_install_lists_the_new_plugin(tmp_path):
    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    env = {**os.environ, "GRAPHARC_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(site), str(FIXTURE_SRC), os.environ.get("PYTHONPATH", "")])}

    def listed() -> set[str]:
        done = subprocess.run([sys.executable, "-m", "grapharc.cli", "plugins", "--json"],
                              capture_output=True, text=True, env=env, timeout=120, check=False)
        return {d["name"] for d in json.loads(done.stdout)["distributions"]}

    assert "grapharc-fixture-plugin" not in listed()
    assert list(cache.iterdir())  # the scan was saved
    install(site, "grapharc-fixture-plugin", "grapharc_fixture_plugin.hooks")
    assert "grapharc-fixture-plugin" in listed()


def test_a_start_that_hit_the_cache_judges_core_ranges_as_a_scan_did_without_packaging(tmp_path):
    site = tmp_path / "site"
    info = install(site, "grapharc-cached-future", "grapharc_cached_future")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: grapharc-cached-future\nVersion: 1.0.0\n"
                                   "Requires-Dist: grapharc-core>=99\n")
    env = {**os.environ, "GRAPHARC_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    probe = ("import json, sys\nfrom grapharc.cli.main import run\nrun(['plugins', '--json'])\n"
             "print(json.dumps('packaging.specifiers' in sys.modules))")

    def started() -> tuple[dict, bool]:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                              cwd=site, timeout=120, check=False)
        report, imported = done.stdout.rsplit("\n", 2)[:2]
        listed = {d["name"]: d for d in json.loads(report)["distributions"]}
        return listed["grapharc-cached-future"], json.loads(imported)

    scanned, hit = started(), started()
    assert scanned[0]["status"] == hit[0]["status"] == "incompatible"
    assert scanned[0]["errors"] == hit[0]["errors"]
    assert hit[1] is False


def test_what_is_written_beside_the_distributions_is_no_rescan(scans, tmp_path, monkeypatch):
    """A folder on ``sys.path`` that a program writes to (a server's sessions beside the registry
    module it serves, ``python -m``'s working folder) keeps the scan: no distribution changed."""
    site = tmp_path / "site"
    install(site, "grapharc-cached-stays", "grapharc_cached_stays")
    monkeypatch.syspath_prepend(str(site))
    names()
    (site / "sessions").mkdir()
    (site / "registry.py").write_text("def register(manager): ...\n")
    assert "grapharc-cached-stays" in names() and len(scans) == 1
