"""``run_command``: run one program from an argv list in the workspace, bounded in time and output.

A decision of a different size from the other tools. The argv is a list and never a shell
string: ``shell=False`` always, a single string is refused rather than split, and a pipeline is
spelled ``["bash", "-lc", "..."]`` so it stays visible in the tool-call record. The cwd is
resolved inside the workspace, the environment is built from an allowlist (``HOME`` is the
workspace; no host secret is passed on), and the child leads its own process group, which is
SIGKILLed when the timeout passes and, so that nothing outlives the call, when the program
itself exits. Past that the child is an ordinary process with the caller's privileges: what
limits it is the permission policy that decides whether it may run at all, and the executor.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from grapharc.errors import GraphARCError
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.workspace import MAX_PATH_CHARS, Workspace

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
MAX_OUTPUT_BYTES = 64 * 1024
"""Of stdout and of stderr each, this much is kept; the rest is read and counted, not kept."""
MAX_ARGV = 1000
MAX_ARGUMENT_CHARS = 100_000
"""The longest single argv element or env value."""
Argument = Annotated[str, Field(max_length=MAX_ARGUMENT_CHARS)]

INHERITED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""Variables copied from GraphARC's own environment when set there."""
SETTABLE = frozenset({"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "NO_COLOR", "COLUMNS", "CI",
                      "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED",
                      "PYTHONWARNINGS", "PYTEST_ADDOPTS"})
"""The only variables a call may set itself."""

_POLL_SECONDS = 0.05
_READ_BYTES = 65536


def argv_problem(argv: Any) -> str | None:
    """What is wrong with ``argv`` unless it is a non-empty list of strings without NUL bytes."""
    if isinstance(argv, str | bytes):
        return ('argv must be a list of strings such as ["pytest", "-q"], not one string; a command '
                'line is never split or given to a shell (spell a pipeline ["bash", "-lc", "a | b"])')
    if not isinstance(argv, list | tuple) or not argv or not all(isinstance(arg, str) for arg in argv):
        return "argv must be a non-empty list of strings"
    if not argv[0]:
        return "argv[0], the program to run, is empty"
    if any("\x00" in arg for arg in argv):
        return "an argv element contains a NUL byte"
    return None


def env_problem(env: Mapping[str, Any]) -> str | None:
    """What is wrong with ``env`` unless it sets only allowlisted names to strings."""
    refused = sorted(name for name in env if name not in SETTABLE)
    if refused:
        return (f"env may not set {', '.join(map(repr, refused))}; it may set only "
                f"{', '.join(sorted(SETTABLE))}")
    if not all(isinstance(value, str) and "\x00" not in value for value in env.values()):
        return "env values must be strings without NUL bytes"
    return None


def _refuse(problem: str | None) -> None:
    """Raise a problem found in a direct call (the args model raises it for a model's call)."""
    if problem is not None:
        raise ToolArgumentError(f"tool 'run_command': {problem}")


class RunCommandArgs(BaseModel):
    """What run_command takes."""

    model_config = ConfigDict(extra="forbid")

    argv: list[Argument] = Field(min_length=1, max_length=MAX_ARGV,
                            description='the program and its arguments as a list, e.g. ["pytest", "-q"]; '
                                        'never one string. A pipeline is ["bash", "-lc", "a | b"]')
    cwd: str = Field(".", min_length=1, max_length=MAX_PATH_CHARS,
                     description="the directory to run in, relative to the workspace root")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT,
                           description=f"seconds before the command is killed (at most {MAX_TIMEOUT:g})")
    env: dict[str, Argument] = Field(default_factory=dict,
                                description="extra environment variables; only these names may be set: "
                                            + ", ".join(sorted(SETTABLE)))

    @field_validator("argv", mode="before")
    @classmethod
    def _not_one_string(cls, argv: Any) -> Any:
        if isinstance(argv, str | bytes):
            raise ValueError(argv_problem(argv))
        return argv

    @field_validator("argv")
    @classmethod
    def _without_nul(cls, argv: list[str]) -> list[str]:
        problem = argv_problem(argv)
        if problem is not None:
            raise ValueError(problem)
        return argv

    @field_validator("env")
    @classmethod
    def _allowlisted(cls, env: dict[str, str]) -> dict[str, str]:
        problem = env_problem(env)
        if problem is not None:
            raise ValueError(problem)
        return env


def environment(home: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: allowlisted host variables, ``HOME`` the workspace, then ``extra``."""
    built = {name: os.environ[name] for name in INHERITED if name in os.environ}
    built.setdefault("PATH", os.defpath)
    built.setdefault("LANG", "C.UTF-8")
    return {**built, "HOME": home, **extra}


class _Output:
    """One stream's first ``MAX_OUTPUT_BYTES`` and how much there was in all."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = MAX_OUTPUT_BYTES - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    def text(self, stream: str) -> str:
        shown = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            shown += (f"\n[run_command: {stream} cut to its first {len(self.kept)} of "
                      f"{self.total} bytes]")
        return shown


def run_command(workspace: str, argv: list[str], cwd: str = ".", timeout: float = DEFAULT_TIMEOUT,
                env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``argv`` in ``cwd``; returns exit_code, stdout, stderr and whether it timed out."""
    extra = dict(env or {})
    _refuse(argv_problem(argv))
    _refuse(env_problem(extra))
    root = Workspace(workspace)
    directory = root.resolve(cwd)
    with os_errors("run_command", cwd):
        if not directory.is_dir():
            raise ToolInputError(f"run_command: cwd {cwd!r} is not a directory in the workspace")
    try:
        process = subprocess.Popen(argv, cwd=directory, env=environment(str(root.root), extra),  # noqa: S603 -- argv list, no shell: running the model's command is this tool's job, under the rules
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, shell=False, start_new_session=True)
    except OSError as exc:
        if isinstance(exc, GraphARCError):  # an executor's refusal (a sandbox violation)
            raise
        raise ToolInputError(f"run_command: cannot run {argv[0]!r}: {exc.strerror or exc}",
                             hint="name a program installed on PATH, or give its path") from None
    outputs = {"stdout": _Output(), "stderr": _Output()}
    try:
        timed_out = _collect(process, outputs, time.monotonic() + timeout)
    finally:
        _kill_group(process)
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return {"exit_code": process.returncode, "timed_out": timed_out,
            "stdout": outputs["stdout"].text("stdout"), "stderr": outputs["stderr"].text("stderr")}


def _collect(process: subprocess.Popen[bytes], outputs: dict[str, _Output], deadline: float) -> bool:
    """Read both pipes until they close and the program has exited; True if the deadline came first.

    The program is left unreaped, so the caller can still kill its whole group by its pid. When
    the program exits, the rest of its group is killed at once, so a background child holding
    the pipes open cannot keep the call waiting until the deadline. On Linux a pidfd wakes the
    loop when the program exits; elsewhere it looks every ``_POLL_SECONDS``.
    """
    exit_fd = _exit_fd(process.pid)
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, outputs["stdout"])  # type: ignore[arg-type]
        selector.register(process.stderr, selectors.EVENT_READ, outputs["stderr"])  # type: ignore[arg-type]
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ, None)
        exited, pipes = False, 2
        try:
            while not exited or pipes:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                if not exited and exit_fd is None and _has_exited(process.pid):
                    exited = True
                    _kill_group(process)
                polling = not exited and exit_fd is None
                for key, _ in selector.select(min(remaining, _POLL_SECONDS) if polling else remaining):
                    if key.data is None:  # the pidfd: the program has exited
                        exited = True
                        selector.unregister(key.fileobj)
                        _kill_group(process)
                    elif chunk := os.read(key.fd, _READ_BYTES):
                        key.data.add(chunk)
                    else:
                        selector.unregister(key.fileobj)
                        pipes -= 1
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
    return False


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux's pidfd), or None elsewhere."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Whether the program has exited, leaving it unreaped so its process group id stays its own."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process in the program's group (the group id is the program's pid)."""
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_command_tool() -> Tool:
    """The ``run_command`` tool, as the grapharc-tools plugin registers it."""
    return Tool(
        name="run_command",
        description=("Run a program in the workspace from an argv list (no shell: a single string is "
                     'refused; for a pipeline use ["bash", "-lc", "..."]). Returns exit_code, stdout, '
                     f"stderr and timed_out. The command is killed after `timeout` seconds (default "
                     f"{DEFAULT_TIMEOUT:g}), and so is anything it left running when it exits; "
                     f"stdout and stderr are each cut to {MAX_OUTPUT_BYTES // 1024} KiB. HOME is the "
                     "workspace and the environment holds only PATH, locale and the allowed `env` names."),
        args_model=RunCommandArgs, function=run_command, side_effect=SideEffect.EXEC,
        needs_network=False, idempotent=False)
