"""The audit hook a sandboxed child installs: every audited operation is checked against its grants.

CPython raises an audit event before opening a file, changing a directory entry, creating a
socket or starting a process; a hook that raises aborts the operation. This one refuses
file access outside the tool's grants, sockets unless the tool declared ``needs_network``,
and every way of starting or signalling a process (a child would run unhooked). The first
refusal is also kept, so a tool that catches the ``SandboxViolation`` still has its call
reported as a violation. Events CPython does not raise (``os.stat``) are not checked: this is
defense in depth inside one interpreter, not a kernel boundary.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from grapharc.tools.sandbox.errors import SandboxViolation
from grapharc.tools.sandbox.grants import Grants, canonical, within

READ, WRITE, ENTRY = "read", "write", "change"
"""How a path is used: read, written through (symlinks followed), or changed as a directory
entry (removed, renamed, linked: its parent is resolved, not a symlink the entry may be)."""

Access = tuple[str, Any, Any]  # (how, path, dir_fd)

PATH_EVENTS: dict[str, Callable[[tuple[Any, ...]], list[Access]]] = {
    "os.listdir": lambda a: [(READ, a[0], None)],
    "os.scandir": lambda a: [(READ, a[0], None)],
    "os.chdir": lambda a: [(READ, a[0], None)],
    "os.getxattr": lambda a: [(READ, a[0], None)],
    "os.listxattr": lambda a: [(READ, a[0], None)],
    "os.fwalk": lambda a: [(READ, a[0], a[4])],
    "os.mkdir": lambda a: [(WRITE, a[0], a[2])],
    "os.chmod": lambda a: [(WRITE, a[0], a[2])],
    "os.chown": lambda a: [(WRITE, a[0], a[3])],
    "os.utime": lambda a: [(WRITE, a[0], a[3])],
    "os.truncate": lambda a: [(WRITE, a[0], None)],
    "os.setxattr": lambda a: [(WRITE, a[0], None)],
    "os.removexattr": lambda a: [(WRITE, a[0], None)],
    "os.remove": lambda a: [(ENTRY, a[0], a[1])],
    "os.rmdir": lambda a: [(ENTRY, a[0], a[1])],
    "os.rename": lambda a: [(ENTRY, a[0], a[2]), (ENTRY, a[1], a[3])],
    "os.link": lambda a: [(WRITE, a[0], a[2]), (ENTRY, a[1], a[3])],
    "shutil.copyfile": lambda a: [(READ, a[0], None), (WRITE, a[1], None)],
    "shutil.copymode": lambda a: [(READ, a[0], None), (WRITE, a[1], None)],
    "shutil.copystat": lambda a: [(READ, a[0], None), (WRITE, a[1], None)],
    "shutil.copytree": lambda a: [(READ, a[0], None), (WRITE, a[1], None)],
    "shutil.move": lambda a: [(ENTRY, a[0], None), (ENTRY, a[1], None)],
    "shutil.rmtree": lambda a: [(WRITE, a[0], a[1] if len(a) > 1 else None)],
    "shutil.make_archive": lambda a: [(WRITE, a[0], None), (READ, a[2], None)],
    "shutil.unpack_archive": lambda a: [(READ, a[0], None), (WRITE, a[1], None)],
    "tempfile.mkstemp": lambda a: [(WRITE, a[0], None)],
    "tempfile.mkdtemp": lambda a: [(WRITE, a[0], None)],
}

UNAUDITED = {"_posixsubprocess": ("fork_exec",), "posix": ("pidfd_open",), "os": ("pidfd_open",),
             "signal": ("pidfd_send_signal",)}
"""Process calls CPython raises no audit event for: the child replaces them by ones that raise
``<module>.<name>``, and refuses to load their modules afresh."""
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
                            "os.fork", "os.forkpty", "pty.spawn", "os.startfile", "os.kill", "os.killpg",
                            "signal.pthread_kill", "webbrowser.open",
                            *(f"{module}.{name}" for module, names in UNAUDITED.items() for name in names)})
NETWORK_EVENTS = frozenset({"http.client.connect", "ftplib.connect", "smtplib.connect", "imaplib.open",
                            "poplib.connect", "nntplib.connect", "telnetlib.Telnet.open", "urllib.Request"})
REFUSED_PREFIXES = ("ctypes.", "sqlite3.enable_load_extension", "sqlite3.load_extension")
WRITE_MODES = frozenset("wax+")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
SQLITE_MEMORY = ("", ":memory:")
LISTING_EVENTS = frozenset({"os.listdir", "os.scandir", "os.fwalk", "os.chdir"})


class Guard:
    """The audit hook for one call of ``tool``: raises SandboxViolation on anything not granted."""

    def __init__(self, tool: str, workspace: str, grants: Grants, *, network: bool) -> None:
        self.tool = tool
        self.workspace = canonical(workspace)
        self.grants = grants
        self.network = network
        self.violation: SandboxViolation | None = None

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            self._check_open(*args[:3])
        elif event in PATH_EVENTS:
            for how, path, dir_fd in PATH_EVENTS[event](args):
                self._check_path(event, how, path, dir_fd)
        elif event == "os.symlink":
            self._check_symlink(*args[:3])
        elif event == "sqlite3.connect":
            self._check_database(args[0])
        elif event in PROCESS_EVENTS:
            self._refuse(f"starting or signalling a process ({event})", _describe(args))
        elif event.startswith(REFUSED_PREFIXES):
            self._refuse(f"native code access ({event})", _describe(args))
        elif not self.network and (event.startswith("socket.") or event in NETWORK_EVENTS):
            self._refuse(f"network access ({event}) without needs_network", _describe(args))

    def _check_open(self, path: Any, mode: Any, flags: Any) -> None:
        if isinstance(path, int):
            return  # wraps a descriptor already opened under this hook
        writes = (isinstance(mode, str) and not WRITE_MODES.isdisjoint(mode)) \
            or bool((flags or 0) & WRITE_FLAGS)
        target = self._check_path("open", WRITE if writes else READ, path, None)
        if mode is None and os.path.isdir(target):
            # os.open's event does not say which dir_fd a call resolves against, so a directory
            # descriptor (through which a relative path could follow a symlink out) is never made
            self._refuse("opening a directory as a descriptor (os.open)", target)

    def _check_path(self, event: str, how: str, path: Any, dir_fd: Any) -> str:
        if path is None and event in ("os.listdir", "os.scandir"):
            path = "."
        if path is None:
            return ""
        target = _resolve(path, dir_fd, follow=how != ENTRY)
        allowed = self.grants.may_read(target, listing=event in LISTING_EVENTS) if how == READ \
            else self.grants.may_write(target)
        if not allowed:
            self._refuse(f"{how} access ({event})", target)
        return target

    def _check_symlink(self, source: Any, link: Any, dir_fd: Any) -> None:
        entry = self._check_path("os.symlink", ENTRY, link, dir_fd)
        pointee = os.path.join(os.path.dirname(entry), os.fsdecode(source))
        if not within(canonical(pointee), (self.workspace,)):
            self._refuse("a symlink pointing outside the workspace (os.symlink)", canonical(pointee))

    def _check_database(self, database: Any) -> None:
        name = os.fsdecode(database) if isinstance(database, str | bytes | os.PathLike) else database
        if isinstance(name, str) and name not in SQLITE_MEMORY:
            if name.startswith("file:"):
                name = name[len("file:"):].split("?", 1)[0]
            self._check_path("sqlite3.connect", WRITE, name, None)

    def check_native(self, module: str, path: str) -> None:
        """Refuse loading an extension module from outside the runtime paths (say, the workspace):
        native code would run where no audit hook reaches; nor may a disarmed one load afresh."""
        target = canonical(path)
        if not self.grants.may_load_native(target):
            self._refuse("loading native code from outside the runtime paths", target)
        if module in UNAUDITED:
            self._refuse(f"loading the disarmed module {module} afresh", target)

    def _refuse(self, operation: str, target: str) -> None:
        violation = SandboxViolation(self.tool, operation, target)
        if self.violation is None:
            self.violation = violation
        raise violation


def _resolve(path: Any, dir_fd: Any, *, follow: bool) -> str:
    """The canonical path an event's ``path`` (relative to ``dir_fd`` or the cwd) names."""
    if isinstance(path, int):
        return os.readlink(f"/proc/self/fd/{path}")
    name = os.fsdecode(path)
    if not os.path.isabs(name):
        base = os.readlink(f"/proc/self/fd/{dir_fd}") if isinstance(dir_fd, int) else os.getcwd()
        name = os.path.join(base, name)
    if follow:
        return canonical(name)
    parent, entry = os.path.split(os.path.normpath(name))
    return os.path.join(canonical(parent), entry)


def _describe(args: tuple[Any, ...]) -> str:
    """An event's arguments for the refusal message, leaving out sockets and environments
    (a process's environment may hold secrets, and the message lands on the trace)."""
    shown = [repr(arg) for arg in args
             if arg is not None and not hasattr(arg, "fileno") and not isinstance(arg, Mapping)]
    return ", ".join(shown)[:200] or "(no arguments)"
