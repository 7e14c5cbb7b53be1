"""Linux process controls that keep a command from reading the agent's secrets or outliving its call.

``protect_agent_process()`` is called by every agent (and before any command starts): it
wipes the values of secret variables (:mod:`grapharc.redaction`) from the process's initial
environment block, the memory ``/proc/PID/environ`` shows (the values stay in ``os.environ``
and libc's environment, which are copied elsewhere first), then marks the process non-dumpable
(``PR_SET_DUMPABLE`` 0), so a process of the same non-root user can no longer open its
``environ``, ``mem``, ``maps`` or ``fd`` nor attach a debugger. Root keeps ``CAP_SYS_PTRACE``
and passes that check, so ``run_command`` drops that capability from its program's bounding set
(``drop_ptrace_capability``): observed on Linux 6.18 as root, the agent's ``/proc/PID/mem`` is
then refused while its ``environ`` stays readable, which is why the block is wiped.
``become_subreaper()`` makes orphaned descendants this process's children. Elsewhere (not
Linux, no libc) each control is a no-op whose report says so. ``prctl`` is called through
ctypes: the standard library has no binding, and the packages that do are C extensions for four calls.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from functools import lru_cache

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_LOWER = 3
PR_SET_CHILD_SUBREAPER = 36
CAP_SYS_PTRACE = 19
ENV_START_FIELD, ENV_END_FIELD = 50, 51
"""``env_start`` and ``env_end`` in ``/proc/self/stat`` (1-based, as proc(5) counts)."""

_protected: list[str] = []
_guard = threading.Lock()


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


def prctl(option: int, argument: int, extra: int = 0) -> str | None:
    """Call ``prctl(option, argument, extra, 0, 0)``; None on success, else why it was not done."""
    libc = _libc()
    if libc is None:
        return "prctl is Linux's, and this is " + sys.platform
    if libc.prctl(option, ctypes.c_ulong(argument), ctypes.c_ulong(extra), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        return os.strerror(ctypes.get_errno())
    return None


def become_subreaper() -> str | None:
    """Make this process the reaper of its orphaned descendants (None, or why not)."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def make_undumpable() -> str | None:
    """Mark this process non-dumpable (None, or why not)."""
    return prctl(PR_SET_DUMPABLE, 0)


def drop_ptrace_capability() -> str | None:
    """Drop ``CAP_SYS_PTRACE`` from this process's bounding and ambient sets, so what it executes
    never has it (None, or why not: a process without ``CAP_SETPCAP`` has nothing to drop)."""
    reason = prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE)
    return reason


def protect_agent_process() -> tuple[str, ...]:
    """Wipe secret values from the initial environment block, then make this process non-dumpable;
    once per process. What could not be done, as sentences (empty when everything was)."""
    with _guard:
        if not _protected:
            _protected.append("done")
            problems = [f"the environment block was not wiped: {reason}"
                        for reason in [wipe_initial_environment()] if reason]
            problems += [f"the process was not made non-dumpable: {reason}"
                         for reason in [make_undumpable()] if reason]
            _protected.extend(problems)
        return tuple(_protected[1:])


def wipe_initial_environment() -> str | None:
    """Overwrite the values of secret variables where ``/proc/PID/environ`` reads them (None, or why
    not). Each is first set again in libc's environment, which copies it, so ``getenv`` still
    answers; ``os.environ`` was copied at startup."""
    from grapharc.redaction import secret_names

    if _libc() is None:
        return "there is no /proc/PID/environ on " + sys.platform
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        start, end = int(fields[ENV_START_FIELD - 3]), int(fields[ENV_END_FIELD - 3])
        block = ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError) as exc:
        return f"/proc/self/stat cannot be read ({exc})"
    secret = {name.encode() for name in secret_names()}
    offset = 0
    for entry in block.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        if equals and value and name in secret:
            os.putenv(name, os.environ.get(name.decode(), value.decode(errors="replace")))
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
        offset += len(entry) + 1
    return None
