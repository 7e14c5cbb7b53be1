"""The container one tool call runs in: its options, checked once, and the spec built per call.

Everything the boundary promises is here, as data the Engine API receives: the workspace as
the only mount (read-write, at ``/workspace``, also the working directory), no network
unless the tool declared ``needs_network``, every capability dropped, no-new-privileges, a
non-root user, a read-only root filesystem with a small ``/tmp`` tmpfs, and memory (no
extra swap) and pid limits.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc.harness.executors import ExecutorOptionError
from grapharc.tools.container.protocol import RUNNER_MODULE

WORKSPACE_MOUNT = "/workspace"
NOBODY = "65534:65534"
USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?")
LABEL = "grapharc.tool"


def default_user() -> str:
    """The caller's ``uid:gid`` (so files written in the workspace stay theirs), or nobody's
    when the caller is root: the container never runs as uid 0."""
    uid, gid = os.getuid(), os.getgid()
    return NOBODY if uid == 0 else f"{uid}:{gid}"


def _positive(name: str, value: Any, *, integer: bool = False) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value) or value <= 0:
        kind = "a positive whole number" if integer else "a positive finite number"
        raise ExecutorOptionError(f"container executor option {name} must be {kind}, got {value!r}")


@dataclass(frozen=True)
class ContainerOptions:
    """How every container of one executor is made; ``image`` has no default on purpose."""

    image: str
    user: str = field(default_factory=default_user)
    memory_mb: float = 512
    pids_limit: int = 128
    tmp_mb: float = 64
    python: str = "python"
    base_url: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.image, str) or not self.image or any(c.isspace() for c in self.image):
            raise ExecutorOptionError(f"container executor option image must name an image, got "
                                      f"{self.image!r}", hint="e.g. image='my-tools:1.0', built with "
                                      "python and grapharc-tools inside")
        if not isinstance(self.user, str) or not USER.fullmatch(self.user) \
                or self.user.partition(":")[0] in ("0", "root"):
            raise ExecutorOptionError(f"container executor option user must be a non-root "
                                      f"'uid[:gid]', got {self.user!r}")
        _positive("memory_mb", self.memory_mb)
        _positive("pids_limit", self.pids_limit, integer=True)
        _positive("tmp_mb", self.tmp_mb)
        if not isinstance(self.python, str) or not self.python:
            raise ExecutorOptionError(f"container executor option python must name the image's "
                                      f"python, got {self.python!r}")
        if self.base_url is not None and (not isinstance(self.base_url, str) or not self.base_url):
            raise ExecutorOptionError(f"container executor option base_url must be an engine URL "
                                      f"such as unix:///var/run/docker.sock, got {self.base_url!r}")


def host_config(options: ContainerOptions, workspace: Path, *, needs_network: bool) -> dict[str, Any]:
    """Keyword arguments for the SDK's ``create_host_config``: the confinement itself."""
    memory = int(options.memory_mb * 2**20)
    return {
        "mounts": [{"Type": "bind", "Source": str(workspace), "Target": WORKSPACE_MOUNT,
                    "ReadOnly": False}],
        "network_mode": "bridge" if needs_network else "none",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,nodev,size={int(options.tmp_mb * 2**20)}"},  # noqa: S108 -- the container's own private tmpfs, not the host's /tmp
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": options.pids_limit,
    }


def container_config(options: ContainerOptions, *, tool: str) -> dict[str, Any]:
    """Keyword arguments for the SDK's ``create_container`` (``host_config`` added by the caller);
    stdin is open once, for the call."""
    return {
        "image": options.image,
        "entrypoint": [options.python, "-m", RUNNER_MODULE],
        "user": options.user,
        "working_dir": WORKSPACE_MOUNT,
        "environment": {"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},  # noqa: S108 -- the container's own private tmpfs, not the host's /tmp
        "labels": {LABEL: tool},
        "tty": False,
        "stdin_open": True,
    }
