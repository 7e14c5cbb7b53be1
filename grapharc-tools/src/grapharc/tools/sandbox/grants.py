"""Which paths a sandboxed tool may read and which it may change.

Writes are granted in the workspace only. Reads are granted there and in the interpreter's
own runtime paths (its prefixes, ``sys.path`` entries, the standard library, locale and
time-zone data and a few device files), so imports keep working while a ``.pth`` dropped
into site-packages is still a write outside the workspace and refused. A ``sys.path`` entry
that contains the workspace or the home directory grants only listings and Python files.
Everything else (``/etc/passwd``, ``~/.ssh``, a sibling project) is neither.
"""

from __future__ import annotations

import glob
import importlib.machinery
import os
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache

RUNTIME_DATA = ("/usr/share/zoneinfo", "/usr/lib/locale", "/usr/share/locale", "/usr/share/i18n",
                "/etc/localtime", "/etc/timezone", "/etc/mime.types", "/etc/os-release",
                "/usr/lib/os-release", "/dev/null", "/dev/zero", "/dev/urandom",
                "/dev/random", *glob.glob("/usr/lib/python3*"), *glob.glob("/usr/local/lib/python3*"))
NETWORK_DATA = ("/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
                "/etc/host.conf", "/etc/services", "/etc/protocols", "/etc/ssl", "/etc/pki",
                "/usr/share/ca-certificates", "/usr/lib/ssl")
WRITABLE_DEVICES = ("/dev/null",)
IMPORT_SUFFIXES = tuple(importlib.machinery.all_suffixes())


def canonical(path: str) -> str:
    """``path`` absolute with every symlink resolved (a missing tail is kept as written)."""
    return os.path.realpath(path)


def within(path: str, roots: tuple[str, ...]) -> bool:
    """Whether the canonical ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)
               for root in roots)


@lru_cache(maxsize=2)
def runtime_roots(*, network: bool) -> tuple[str, ...]:
    """The interpreter's own paths (plus name-resolution and CA files for a network tool);
    they do not move while it runs."""
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  *sysconfig.get_paths().values(), *RUNTIME_DATA, *(NETWORK_DATA if network else ())]
    return _existing(tuple(candidates))


def search_path_roots() -> tuple[str, ...]:
    """Every ``sys.path`` entry, canonical (an empty entry is the current directory)."""
    cwd = os.getcwd()
    return _existing(tuple(entry or cwd for entry in sys.path))


@lru_cache(maxsize=32)
def _existing(candidates: tuple[str, ...]) -> tuple[str, ...]:
    roots = {canonical(path) for path in candidates if os.path.exists(path)}
    roots.discard(os.sep)  # a sys.path entry of "/" must not grant the whole disk
    return tuple(sorted(roots))


@dataclass(frozen=True)
class Grants:
    """The canonical roots a tool may read, the ones it may change, where native code may load
    from, and the search-path entries it may only import from."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    native: tuple[str, ...]
    imports: tuple[str, ...]

    @classmethod
    def for_workspace(cls, workspace: str, *, network: bool) -> Grants:
        """A search-path entry that holds the workspace or the home directory (``python -m`` run
        from ``~`` puts it there) would grant its siblings: from those, only imports are read."""
        root = canonical(workspace)
        home = canonical(os.path.expanduser("~"))
        runtime = runtime_roots(network=network)
        search = search_path_roots()
        broad = tuple(entry for entry in search if within(root, (entry,)) or within(home, (entry,)))
        narrow = tuple(entry for entry in search if entry not in broad)
        return cls(read=(root, *runtime, *narrow), write=(root, *WRITABLE_DEVICES),
                   native=(*runtime, *narrow), imports=broad)

    def may_read(self, path: str, *, listing: bool = False) -> bool:
        """Whether ``path`` may be read (``listing``: listed as a directory)."""
        return within(path, self.read) or (within(path, self.imports)
                                           and (listing or path.endswith(IMPORT_SUFFIXES)))

    def may_write(self, path: str) -> bool:
        return within(path, self.write)

    def may_load_native(self, path: str) -> bool:
        return within(path, self.native)
