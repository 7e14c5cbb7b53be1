"""What one tool call's processes may use: address space, processes, CPU seconds, file size.

``CallLimits`` holds the numbers (0 lifts a limit); the agent sets the ones its settings resolved
(flag > ``GRAPHARC_TOOL_*`` > grapharc.toml > these defaults) around each batch of calls
(``limited``), and what starts a process for a call reads them (``call_limits``) and applies
them with ``setrlimit`` in that process before the tool's code runs (``apply``). The kernel's
own rules bound what they mean: the process count is per real user (so the limit is set to the
user's current count plus the allowance) and does not bind root at all (root's limit is the bare
allowance, which binds only what drops to another user); the address-space limit
of a forked child counts what it already maps (so it is set on top of that).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, fields

try:
    import resource  # imported here, not in the forked child that applies the limits
except ImportError:  # pragma: no cover - not POSIX: nothing here starts a call's processes
    resource = None  # type: ignore[assignment]

MIB = 1 << 20
DEFAULTS = {"memory_mb": 1024, "processes": 256, "cpu_seconds": 300, "file_mb": 1024}
"""The built-in limits: 1 GiB of address space, 256 more processes, 300 CPU seconds, 1 GiB files."""
MAXIMA = {"memory_mb": 1 << 30, "processes": 1 << 22, "cpu_seconds": 10**8, "file_mb": 1 << 30}


class CallLimitsError(ValueError):
    """A limit that is not a whole number from 0 (no limit) to its maximum."""


@dataclass(frozen=True)
class CallLimits:
    """Per-call resource limits (see the module docstring); 0 means no limit."""

    memory_mb: int = DEFAULTS["memory_mb"]
    processes: int = DEFAULTS["processes"]
    cpu_seconds: int = DEFAULTS["cpu_seconds"]
    file_mb: int = DEFAULTS["file_mb"]

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAXIMA[name]:
                raise CallLimitsError(f"tool limit {name} must be a whole number from 0 (no limit) to "
                                      f"{MAXIMA[name]}, got {value!r}")

    @classmethod
    def from_settings(cls, values: Mapping[str, int | None]) -> CallLimits:
        """The limits ``values`` set, the built-in ones for the rest (None counts as unset)."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise CallLimitsError(f"no tool limit named {', '.join(unknown)}; "
                                  f"limits: {', '.join(sorted(known))}")
        return cls(**{name: value for name, value in values.items() if value is not None})

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CallLimits:
        return cls(**json.loads(text))

    def apply(self, *, forked: bool = False) -> None:
        """Set these limits on this process (inherited by what it starts). ``forked``: this is a copy
        of a larger process, so the address space is limited on top of what it maps already."""
        base_memory = _address_space() if forked else 0
        base_tasks = _user_tasks() if self.processes and os.getuid() != 0 else 0  # root: not enforced
        wanted = {resource.RLIMIT_AS: self.memory_mb and base_memory + self.memory_mb * MIB,
                  resource.RLIMIT_NPROC: self.processes and base_tasks + self.processes,
                  resource.RLIMIT_CPU: self.cpu_seconds,
                  resource.RLIMIT_FSIZE: self.file_mb * MIB}
        for kind, value in wanted.items():
            if value:  # soft and hard, never above the hard limit already in force
                hard = resource.getrlimit(kind)[1]
                value = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(kind, (value, value))


def _status(pid: str = "self") -> dict[str, str]:
    """The fields of ``/proc/PID/status`` (empty where /proc does not say)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            return dict(line.rstrip("\n").partition(":")[::2] for line in status)
    except OSError:
        return {}


def _address_space() -> int:
    """This process's mapped bytes (status's VmSize), 0 where /proc does not say. Read from
    ``statm``: a fifth of the cost of ``status``, in the sandboxed child's one critical path."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        return 0
    try:
        pages = os.read(fd, 128).split()[:1]
    finally:
        os.close(fd)
    return int(pages[0]) * os.sysconf("SC_PAGE_SIZE") if pages and pages[0].isdigit() else 0


def _user_tasks() -> int:
    """How many tasks (threads) this process's real user has: what RLIMIT_NPROC counts."""
    uid = str(os.getuid())
    count = 0
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        fields = _status(pid) if pid.isdigit() else {}
        if fields.get("Uid", "").split()[:1] == [uid]:
            threads = fields.get("Threads", "1").strip()
            count += int(threads) if threads.isdigit() else 1
    return count


CURRENT: ContextVar[CallLimits | None] = ContextVar("grapharc_call_limits", default=None)


def call_limits() -> CallLimits:
    """The limits of the tool call running in this context (the built-in ones unless set)."""
    return CURRENT.get() or CallLimits()


@contextlib.contextmanager
def limited(limits: CallLimits) -> Iterator[None]:
    """Make ``limits`` the ones tool calls in this context run under."""
    token = CURRENT.set(limits)
    try:
        yield
    finally:
        CURRENT.reset(token)
