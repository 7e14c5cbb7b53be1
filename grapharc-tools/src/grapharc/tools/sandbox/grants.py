"""Which paths a sandboxed tool may read and which it may change.

Writes are granted in the workspace only. Reads are granted there and in the interpreter's
own runtime paths (its prefixes, every ``sys.path`` entry, the standard library, locale and
time-zone data and a few device files), so imports keep working while a ``.pth`` dropped
into site-packages is still a write outside the workspace and refused. Everything else
(``/etc/passwd``, ``~/.ssh``, a sibling project) is neither.
"""

from __future__ import annotations

import glob
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


def canonical(path: str) -> str:
    """``path`` absolute with every symlink resolved (a missing tail is kept as written)."""
    return os.path.realpath(path)


def within(path: str, roots: tuple[str, ...]) -> bool:
    """Whether the canonical ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)
               for root in roots)


def runtime_roots(*, network: bool) -> tuple[str, ...]:
    """The interpreter's own paths (plus name-resolution and CA files for a network tool)."""
    return _runtime_roots(network, tuple(sys.path), os.getcwd())


@lru_cache(maxsize=8)
def _runtime_roots(network: bool, search_path: tuple[str, ...], cwd: str) -> tuple[str, ...]:
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  *sysconfig.get_paths().values(), *(entry or cwd for entry in search_path),
                  *RUNTIME_DATA, *(NETWORK_DATA if network else ())]
    roots = {canonical(path) for path in candidates if os.path.exists(path)}
    roots.discard(os.sep)  # a sys.path entry of "/" must not grant the whole disk
    return tuple(sorted(roots))


@dataclass(frozen=True)
class Grants:
    """The canonical roots a tool may read, the ones it may change, and where native code may load from."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    native: tuple[str, ...]

    @classmethod
    def for_workspace(cls, workspace: str, *, network: bool) -> Grants:
        root = canonical(workspace)
        runtime = runtime_roots(network=network)
        return cls(read=(root, *runtime), write=(root, *WRITABLE_DEVICES), native=runtime)

    def may_read(self, path: str) -> bool:
        return within(path, self.read)

    def may_write(self, path: str) -> bool:
        return within(path, self.write)

    def may_load_native(self, path: str) -> bool:
        return within(path, self.native)
