"""``run_command``: run one program from an argv list in the workspace, bounded in time and output.

A decision of a different size from the other tools. The argv is a list and never a shell
string: ``shell=False`` always, a single string is refused rather than split, and a pipeline is
spelled ``["bash", "-lc", "..."]`` so it stays visible in the tool-call record. The cwd is
resolved inside the workspace, the environment is built from an allowlist (``HOME`` is the
workspace; no host secret is passed on). The program runs under a keeper of its own
(``grapharc.tools.reaper``) that kills everything it started, detached or not, when it exits,
when the timeout passes, or when this process dies; with the call's ``CallLimits`` (address
space, processes, CPU seconds, file size); and, as root, without ``CAP_SYS_PTRACE``. Before the
first command this process wipes its secrets from ``/proc/PID/environ`` and becomes
non-dumpable (``grapharc.harness.process_controls``). Past that the child is an ordinary
process with the caller's privileges: what limits it is the permission policy that decides
whether it may run at all, and the executor.
"""

from __future__ import annotations

import os
import selectors
import signal
import time
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from grapharc.errors import GraphARCError
from grapharc.harness.limits import call_limits
from grapharc.harness.process_controls import protect_agent_process
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError
from grapharc.tools.errors import ToolInputError, os_errors
from grapharc.tools.reaper.keeper import KeeperStartError
from grapharc.tools.reaper.launch import KeptCommand, start_kept
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
    protect_agent_process()
    try:
        started = start_kept(argv, str(directory), environment(str(root.root), extra), call_limits())
    except OSError as exc:
        if isinstance(exc, GraphARCError):  # an executor's refusal (a sandbox violation)
            raise
        raise ToolInputError(f"run_command: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
    outputs = {"stdout": _Output(), "stderr": _Output()}
    try:
        timed_out = _collect(started, outputs, time.monotonic() + timeout)
        if timed_out:
            started.stop()
        exit_code = -int(signal.SIGKILL) if timed_out else started.exit_code()
    except KeeperStartError as exc:
        raise ToolInputError(f"run_command: cannot run {argv[0]!r}: {exc.strerror}",
                             hint="name a program installed on PATH, or give its path") from None
    finally:
        started.close()
    return {"exit_code": exit_code, "timed_out": timed_out,
            "stdout": outputs["stdout"].text("stdout"), "stderr": outputs["stderr"].text("stderr")}


def _collect(started: KeptCommand, outputs: dict[str, _Output], deadline: float) -> bool:
    """Read both pipes until they close and the keeper has said the command ended (by then it has
    killed everything the command left); True if the deadline came first."""
    with selectors.DefaultSelector() as selector:
        selector.register(started.stdout, selectors.EVENT_READ, outputs["stdout"])
        selector.register(started.stderr, selectors.EVENT_READ, outputs["stderr"])
        selector.register(started.channel, selectors.EVENT_READ, None)
        waiting = 3
        while waiting:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            for key, _ in selector.select(remaining):
                chunk = b"" if key.data is None else os.read(key.fd, _READ_BYTES)
                if chunk:
                    key.data.add(chunk)
                else:  # a pipe closed, or the keeper's word that the command ended
                    selector.unregister(key.fileobj)
                    waiting -= 1
    return False


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
