"""Opening a workspace path so that no symlink is followed on the way, even one a racing process swaps in.

A tool first resolves its path argument (``Workspace.resolve``: symlinks followed, the result
inside the root). What it then opens is that real path taken relative to the workspace's own
directory descriptor, with no symlink allowed anywhere along it: resolution and opening are one
step for the kernel, so a folder another process swaps for a symlink out between the check and
the use makes the call fail (``WorkspaceEscape``) instead of reaching outside.

Three ways, one rule:

* ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` (Linux 5.6+),
  one system call. The standard library has no binding for it and no well-kept package offers
  one, so it goes through ctypes; it is probed once, and ENOSYS or EPERM (an older kernel, a
  seccomp filter in a container) means the walk.
* a walk from the root's descriptor, one component at a time, each opened with ``O_NOFOLLOW``.
* by path, in the sandboxed executor's child only (``confine_sandboxed_child``): its audit hook
  refuses foreign calls and directory descriptors, so there the kernel confines instead: Landlock
  (``grapharc.tools.landlock``) keeps the child's file access inside the sandbox's grants (writes
  in the workspace, reads there and in the interpreter's runtime paths), and a swapped symlink
  cannot lead outside them. Without Landlock the sandbox is as racy as its hook.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib.machinery
import os
import stat
import struct
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from grapharc.tools import landlock
from grapharc.tools.workspace import WorkspaceEscape

OPENAT2 = 437
"""openat2's system call number; the same on every architecture Linux added it for."""
RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x02, 0x04, 0x08
RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
"""A descriptor that only names a folder (Linux); elsewhere a read-only one does the same job."""
STEP = O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC if hasattr(os, "O_PATH") \
    else os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How the walk opens each folder on the way: with O_PATH a symlink there is opened as itself (and
told apart by fstat); without it, O_NOFOLLOW refuses it with ELOOP."""
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
"""How a folder the tools list, search or write in is held open."""
SHARED_LIBRARIES = ("/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib",
                    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
"""Read by the dynamic loader when an extension module loads its own libraries (the audit hook
never sees those reads), so the sandboxed child's kernel rules let it read them too."""
IMPORT_SUFFIXES = tuple(importlib.machinery.all_suffixes())
RETRIES = 8
"""openat2 answers EAGAIN when a rename elsewhere raced its resolution; it is tried this often."""

_by_path = False


def confine_sandboxed_child(*, read: Iterable[str], imports: Iterable[str], write: Iterable[str]) -> bool:
    """In the sandboxed executor's child, before its audit hook goes in: let the kernel (Landlock)
    keep file access to reading below ``read``, importing from ``imports`` and changing below
    ``write``, and open by path from now on, since the hook refuses foreign calls and directory
    descriptors. Whether Landlock holds (without it, a swap raced between the hook's check and
    the open is not caught)."""
    global _by_path
    _by_path = True
    return landlock.restrict([*((path, landlock.READ) for path in (*read, *SHARED_LIBRARIES)),
                              *importable(imports), *((path, landlock.WRITE) for path in write)])


def importable(roots: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Landlock rules for search-path entries the sandbox grants imports from, not their other files
    (an entry that holds the workspace, say): listing them, reading the modules and packages right
    in them. The kernel cannot match a suffix below a folder, so a package is readable whole."""
    for root in roots:
        yield root, landlock.LIST
        with contextlib.suppress(OSError), os.scandir(root) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False) and entry.name.endswith(IMPORT_SUFFIXES):
                    yield entry.path, landlock.READ_FILE
                elif entry.is_dir(follow_symlinks=False) and (entry.name == "__pycache__" or os.path.isfile(
                        os.path.join(entry.path, "__init__.py"))):
                    yield entry.path, landlock.READ


OpenAt2 = Callable[[int, str, int, int], int]


@functools.cache
def _openat2() -> OpenAt2 | None:
    """``openat2(dir_fd, path, flags, mode)`` returning a descriptor, or None where the kernel
    (or a seccomp filter) does not offer it; probed once per process."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long

    def openat2(dir_fd: int, path: str, flags: int, mode: int) -> int:
        how = struct.pack("QQQ", flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, RESOLVE)
        name = os.fsencode(path)
        for _ in range(RETRIES):
            fd = syscall(ctypes.c_long(OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(name),
                         ctypes.c_char_p(how), ctypes.c_size_t(len(how)))
            if fd >= 0:
                return int(fd)
            code = ctypes.get_errno()
            if code != errno.EAGAIN:
                raise OSError(code, os.strerror(code), path)
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), path)

    probe = os.open("/", O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.close(openat2(probe, ".", O_PATH, 0))
    except OSError:  # ENOSYS (before 5.6), EPERM (a seccomp filter): the walk does the same
        return None
    finally:
        os.close(probe)
    return openat2


def _walk(root_fd: int, relative: str, flags: int, mode: int) -> int:
    """Open ``relative`` under ``root_fd`` one component at a time, none of them a symlink or ``..``."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts or relative.startswith("/"):  # openat2's RESOLVE_BENEATH refuses these with EXDEV
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), relative)
    folder_wanted = bool(flags & os.O_DIRECTORY)  # then the last component is a step too, and "." is opened
    current = root_fd
    try:
        for part in parts if folder_wanted else parts[:-1]:
            step = os.open(part, STEP, dir_fd=current)
            kind = os.fstat(step).st_mode
            if current != root_fd:
                os.close(current)
            current = step
            if not stat.S_ISDIR(kind):
                code = errno.ELOOP if stat.S_ISLNK(kind) else errno.ENOTDIR
                raise OSError(code, os.strerror(code), relative)
        last = "." if folder_wanted or not parts else parts[-1]
        return os.open(last, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=current)
    finally:
        if current != root_fd:
            os.close(current)


@contextlib.contextmanager
def _no_symlink(relative: str) -> Iterator[None]:
    """Turn "a symlink on the way" (ELOOP; EXDEV from openat2's RESOLVE_BENEATH) into a
    WorkspaceEscape: the path was resolved without one, so the workspace changed since."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV):
            raise WorkspaceEscape(f"path {relative!r} now leads through a symlink (the workspace changed "
                                  "while the tool used it); it is not followed") from None
        raise


class _Held:
    """A descriptor this module opened, closed when its ``with`` block ends."""

    fd: int | None

    def close(self) -> None:
        """Close the descriptor (once)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


@dataclass
class Directory(_Held):
    """A folder in the workspace, held open while a tool lists it, searches it or writes in it.

    Its entries are named relative to it and never followed when they are symlinks. ``fd`` is
    None when opening by path (then every name is joined to ``path``).
    """

    fd: int | None
    path: str

    def _at(self, name: str) -> tuple[str, int | None]:
        """How ``os`` functions name the entry: (name, this folder's descriptor), or (path, None)."""
        return (name, self.fd) if self.fd is not None else (os.path.join(self.path, name), None)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        """A descriptor for the entry ``name``; a symlink there is refused (ELOOP), not followed."""
        at, fd = self._at(name)
        with _no_symlink(name):
            return os.open(at, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)

    def lstat(self, name: str) -> os.stat_result:
        """The entry ``name`` itself (a symlink is described, not followed)."""
        at, fd = self._at(name)
        return os.stat(at, dir_fd=fd, follow_symlinks=False)

    def entries(self) -> list[os.DirEntry[str]]:
        """The folder's entries, sorted by name."""
        with os.scandir(self.fd if self.fd is not None else self.path) as listing:
            return sorted(listing, key=lambda entry: entry.name)

    def mkdir(self, name: str) -> None:
        """Make the folder ``name`` here."""
        at, fd = self._at(name)
        os.mkdir(at, dir_fd=fd)

    def replace(self, source: str, target: str) -> None:
        """Rename the entry ``source`` over ``target``, both in this folder (atomic)."""
        (src, src_fd), (dst, dst_fd) = self._at(source), self._at(target)
        os.replace(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)

    def unlink(self, name: str) -> None:
        """Remove the entry ``name`` here."""
        at, fd = self._at(name)
        os.unlink(at, dir_fd=fd)



@dataclass
class Beneath(_Held):
    """The workspace root held open, and everything opened relative to it (see the module docstring).

    Paths given here are real paths relative to the root (``Workspace.relative`` of a resolved
    path): a symlink met on the way means the workspace changed since, and is a WorkspaceEscape.
    """

    root: Path
    fd: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if not _by_path:
            self.fd = os.open(self.root, O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    def open(self, relative: str, flags: int, mode: int = 0o600) -> int:
        """A descriptor for the workspace path ``relative``, reached through no symlink."""
        with _no_symlink(relative):
            if self.fd is None:
                return os.open(self.root / relative, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
            openat2 = _openat2()
            if openat2 is not None:
                return openat2(self.fd, relative, flags, mode)
            return _walk(self.fd, relative, flags, mode)

    def directory(self, relative: str, *, create: bool = False) -> Directory:
        """The folder ``relative``, held open (made first, with its parents, if ``create``)."""
        where = os.path.normpath(self.root / relative)
        if self.fd is None:
            if create:
                os.makedirs(where, exist_ok=True)
            with _no_symlink(relative):
                kind = os.stat(where, follow_symlinks=False).st_mode
                if not stat.S_ISDIR(kind):
                    code = errno.ELOOP if stat.S_ISLNK(kind) else errno.ENOTDIR
                    raise OSError(code, os.strerror(code), relative)
            return Directory(None, where)
        try:
            return Directory(self.open(relative, DIRECTORY), where)
        except FileNotFoundError:
            if not create:
                raise
        return self._make(relative, where)

    def _make(self, relative: str, where: str) -> Directory:
        """Create each missing folder of ``relative`` inside the one before it, then open it."""
        done = ""
        for part in (part for part in relative.split("/") if part not in ("", ".")):
            with self.directory(done or ".") as parent, contextlib.suppress(FileExistsError):
                parent.mkdir(part)
            done = f"{done}/{part}" if done else part
        return Directory(self.open(relative, DIRECTORY), where)

