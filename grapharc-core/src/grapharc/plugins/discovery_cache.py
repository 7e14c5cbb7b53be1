"""The plugin entry points found by :func:`~grapharc.plugins.host.discover_sources`, kept in a file.

Scanning every installed distribution's metadata is most of what a CLI start costs beyond
Typer. What that scan finds is fixed by the interpreter, ``sys.path`` and, on each of its
entries, the ``.dist-info``/``.egg-info``/``EGG-INFO`` folders with their ``METADATA`` and
``entry_points.txt`` (name, inode, size, modification time). That fingerprint, with this
core's version, is the cache's key: installing, removing or changing a distribution changes it,
and the next start scans again. A folder's own stamp is not in it: the folder's list of
metadata folders says what an install or removal there changed, and anything else written there
(a server's sessions beside its registry module on ``PYTHONPATH``, ``python -m``'s working
folder) changed nothing a scan finds. Each plugin's verdict on its core range is saved too, so a
start that hit the cache does not import ``packaging``. A cache that cannot be read or written
is only a scan that was not saved.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import zlib
from functools import partial
from pathlib import Path
from typing import Any

from grapharc._version import __version__
from grapharc.plugins.host import CORE_VERDICTS, PluginSource, discover_sources, supports_this_core

FORMAT = 2
"""Bumped whenever what the cache file holds changes shape."""
KEPT = 8
"""Scans a cache file keeps, newest first: one per ``sys.path`` an interpreter starts with (the
``grapharc`` script's, ``python -m`` from a few folders), so alternating them is no rescan."""
CACHE_DIR_VARIABLE = "GRAPHARC_CACHE_DIR"
METADATA_SUFFIXES = (".dist-info", ".egg-info")
EGG_METADATA = "EGG-INFO"
"""The metadata folder inside an ``.egg`` that is itself a ``sys.path`` entry."""
METADATA_FILES = ("METADATA", "PKG-INFO", "entry_points.txt")


def cache_file() -> Path:
    """This interpreter's cache file, in ``$GRAPHARC_CACHE_DIR`` or the user's cache folder."""
    folder = os.environ.get(CACHE_DIR_VARIABLE) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "grapharc")
    interpreter = zlib.crc32(f"{sys.executable}\0{sys.prefix}".encode())
    return Path(folder) / f"plugins-{interpreter:08x}.json"


def _stamp(path: str) -> list[int] | None:
    """What changes when ``path`` is replaced or rewritten: inode, size, mtime (``None``: absent)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_ino, found.st_size, found.st_mtime_ns]


def _entry_fingerprint(entry: str) -> list[Any]:
    """A ``sys.path`` entry's stamp (a zip file's, or None: nothing there) or, for a folder, every
    distribution metadata folder in it."""
    folder = entry or "."
    try:
        names = sorted(name for name in os.listdir(folder)
                       if name.endswith(METADATA_SUFFIXES) or name == EGG_METADATA)
    except OSError:  # a zip file, or nothing there
        return [entry, _stamp(folder)]
    distributions = []
    for name in names:
        info = os.path.join(folder, name)
        files = (_stamp(os.path.join(info, file)) for file in METADATA_FILES)
        distributions.append([name, _stamp(info), *files])
    return [entry, distributions]


def fingerprint() -> list[Any]:
    """Everything the entry-point scan depends on, as JSON-ready data to compare."""
    return [FORMAT, __version__, sys.executable, sys.version,
            [_entry_fingerprint(entry) for entry in sys.path]]


def load_reference(value: str) -> Any:
    """The object an entry point's ``module`` or ``module:attribute.path`` value names."""
    module, _, attributes = value.partition(":")
    found: Any = importlib.import_module(module.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        found = getattr(found, attribute)
    return found


def _as_data(sources: list[PluginSource]) -> list[dict[str, str | None]]:
    return [{"distribution": source.distribution, "version": source.version, "module": source.module,
             "requires": source.requires} for source in sources]


def _from_data(rows: list[dict[str, str | None]]) -> list[PluginSource]:
    return [PluginSource(str(row["distribution"]), str(row["version"]), str(row["module"]),
                         partial(load_reference, str(row["module"])), row["requires"])
            for row in rows]


def _saved(path: Path) -> list[dict[str, Any]]:
    """The scans saved in ``path``, newest first; none if it is absent or unreadable."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return saved if isinstance(saved, list) else []


def _read(saved: list[dict[str, Any]], key: list[Any]) -> list[PluginSource] | None:
    """The sources saved under ``key``, their core-range verdicts restored to
    ``CORE_VERDICTS``; ``None`` if there are none, or they are unreadable."""
    for scan in saved:
        try:
            if scan["key"] == key:
                sources = _from_data(scan["sources"])
                CORE_VERDICTS.update({str(range_): verdict if verdict is None else str(verdict)
                                      for range_, verdict in scan["verdicts"].items()})
                return sources
        except (KeyError, TypeError, AttributeError):
            return None
    return None


def _write(path: Path, saved: list[dict[str, Any]], key: list[Any], sources: list[PluginSource]) -> None:
    """Save ``sources`` under ``key`` as the newest of at most ``KEPT`` scans, atomically (a reader
    sees the old file or the new one)."""
    import tempfile  # only when a scan is saved: not on the path of a start that hit the cache

    verdicts = {source.requires: supports_this_core(source.requires)
                for source in sources if source.requires is not None}
    kept = [{"key": key, "sources": _as_data(sources), "verdicts": verdicts},
            *(scan for scan in saved if isinstance(scan, dict) and scan.get("key") != key)][:KEPT]
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(json.dumps(kept))  # dumps: the C encoder; dump streams through pure Python
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise


def cached_sources() -> list[PluginSource]:
    """:func:`discover_sources`, from the cache file when nothing it depends on has changed. The
    fingerprint is taken before the scan, so an install during the scan saves a stale key."""
    path, key = cache_file(), fingerprint()
    saved = _saved(path)
    sources = _read(saved, key)
    if sources is None:
        sources = discover_sources()
        _write(path, saved, key, sources)
    return sources
