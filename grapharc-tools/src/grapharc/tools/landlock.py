"""Landlock (Linux 5.13+): the kernel keeps this process's file access inside named folders.

``restrict([(path, rights), ...])`` lets the calling process (and anything it starts) do only
what the rules grant (read, list, change, below a folder or on one file), from then on and for good,
whatever path or swapped-in symlink it follows: the check is made by the kernel on the file it
reaches, not on a path beforehand. The sandboxed executor's child calls it before running a tool.
Where Landlock is missing (an older kernel, a kernel whose security modules leave it out, a
seccomp filter) nothing changes and it returns False.

The standard library has no binding and the PyPI ones are pre-releases or young, so the three
system calls go through ctypes; the constants are the kernel's uapi ``linux/landlock.h``.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import struct
import sys
from collections.abc import Iterable

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""System call numbers, the same on every architecture (they came after the tables were unified)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
MAKE_AND_REMOVE = sum(1 << bit for bit in range(4, 13))
"""Removing folders and files, making devices, folders, files, sockets, FIFOs and symlinks."""
REFER, TRUNCATE = 1 << 13, 1 << 14
"""Linking or renaming across folders (ABI 2), truncating (ABI 3)."""
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
"""The rights a rule on a file (not a folder) may carry."""
LIST, READ = READ_DIR, EXECUTE | READ_FILE | READ_DIR
WRITE = -1
"""Every right this kernel's Landlock handles: read, change, create, remove, rename, truncate."""


def abi() -> int:
    """The Landlock ABI version this kernel offers, 0 if none."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    return max(version, 0)


def restrict(rules: Iterable[tuple[str, int]]) -> bool:
    """Confine this process's file access to the ``(path, rights)`` rules given (rights below a
    folder, or on a file; ``READ``, ``LIST``, ``READ_FILE`` or ``WRITE``; a missing path is
    skipped); False, changing nothing, where Landlock is missing."""
    version = abi()
    if version < 1:
        return False
    handled = READ | WRITE_FILE | MAKE_AND_REMOVE | (REFER if version >= 2 else 0) \
        | (TRUNCATE if version >= 3 else 0)
    ruleset = _syscall(CREATE_RULESET, struct.pack("Q", handled), 8, 0)
    if ruleset < 0:
        return False
    try:
        for path, rights in rules:
            _allow(ruleset, path, rights & handled)
        _prctl_no_new_privs()
        if _syscall(RESTRICT_SELF, ruleset, 0) < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_restrict_self: {os.strerror(code)}")
    finally:
        os.close(ruleset)
    return True


def _allow(ruleset: int, path: str, rights: int) -> None:
    """Add "``rights`` below ``path``" to the ruleset (a file gets only the rights a file takes)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        if not rights:  # the kernel refuses an empty rule; a file granted only a listing gets nothing
            return
        rule = struct.pack("=Qi", rights, fd)
        if _syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, 0) < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule {path}: {os.strerror(code)}")
    finally:
        os.close(fd)


def _prctl_no_new_privs() -> None:
    """Landlock needs no_new_privs unless the caller may administer the system; set it either way."""
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code)}")


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _syscall(number: int, *args: int | bytes | None) -> int:
    """``syscall(number, *args)``; negative on failure, with the errno in ``ctypes.get_errno()``.
    ENOSYS and EOPNOTSUPP (Landlock built but disabled) read as "not offered"."""
    function = _libc().syscall
    converted = [ctypes.c_char_p(arg) if isinstance(arg, bytes) else ctypes.c_long(arg or 0) for arg in args]
    result = int(function(ctypes.c_long(number), *converted))
    if result < 0 and ctypes.get_errno() in (errno.ENOSYS, errno.EOPNOTSUPP):
        return -1
    return result
