"""Nothing a tool call starts outlives it, and every call runs under limits an operator can change.

Each descendant below leaves the command's process group (``setsid``, or job control's ``set
-m``, which gives a background job a group of its own) and records its pid before the command it
came from returns, so the test knows whom to look for; it must be gone the moment the call
returns (its keeper reaps it before it reports). Where the call ends asynchronously (its agent
killed), the test waits on the descendant's pidfd, bounded only as a failure guard.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from grapharc.harness.executors import ToolFailedError, ToolTimeoutError
from grapharc.harness.limits import CallLimits, limited
from grapharc.harness.tools import Tool
from grapharc.tools import SandboxedExecutor
from grapharc.tools.command import run_command
from grapharc.tools.sandbox import child as sandbox_child

FAILURE_GUARD_SECONDS = 60.0
WAIT_FOR_PID = "while [ ! -s pid ]; do sleep 0.01; done"
DETACHED = {
    "setsid": "setsid bash -c 'echo $$ > pid; while :; do echo x >> grows; sleep 0.05; done' &",
    "double-fork": "set -m; ( ( bash -c 'echo $$ > pid; exec sleep 1000' & ) & ); wait;",
    "nohup": "set -m; nohup bash -c 'echo $$ > pid; exec sleep 1000' > /dev/null 2>&1 &",
}


def gone(pid: int) -> bool:
    """Whether no process has ``pid`` any more (not even a zombie)."""
    try:
        os.close(os.pidfd_open(pid))
    except ProcessLookupError:
        return True
    return False


def wait_gone(pid: int) -> bool:
    """Wait for ``pid`` to exit (its pidfd turns readable), then for it to be reaped."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        if not select.select([fd], [], [], FAILURE_GUARD_SECONDS)[0]:
            return False
    finally:
        os.close(fd)
    return True


@pytest.mark.parametrize("how", sorted(DETACHED))
def test_a_descendant_the_command_detached_is_gone_when_the_call_returns(tmp_path, how):
    result = run_command(str(tmp_path), ["bash", "-c", f"{DETACHED[how]} {WAIT_FOR_PID}; echo started"])
    assert result["exit_code"] == 0 and result["stdout"] == "started\n", result
    pid = int((tmp_path / "pid").read_text())
    assert gone(pid)


def test_a_timed_out_call_leaves_nothing_running(tmp_path):
    result = run_command(str(tmp_path), ["bash", "-c", f"{DETACHED['setsid']} {WAIT_FOR_PID}; sleep 1000"],
                         timeout=1)
    assert result["timed_out"] and result["exit_code"] == -signal.SIGKILL
    assert gone(int((tmp_path / "pid").read_text()))


AGENT = """
import sys
from grapharc.tools.command import run_command
run_command(sys.argv[1], ["bash", "-c", sys.argv[2]], timeout=600)
"""


def test_when_the_agent_dies_mid_call_what_its_command_started_dies_too(tmp_path):
    command = f"{DETACHED['setsid']} {WAIT_FOR_PID}; touch ready; sleep 1000"
    agent = subprocess.Popen([sys.executable, "-c", AGENT, str(tmp_path), command])
    try:
        inotify_free_wait(tmp_path / "ready", agent)
        pid = int((tmp_path / "pid").read_text())
        assert not gone(pid)
    finally:
        agent.kill()
        agent.wait()
    assert wait_gone(pid)


def inotify_free_wait(path: Path, process: subprocess.Popen[bytes]) -> None:
    """Wait for ``path`` to appear while ``process`` lives (it writes it as its last step)."""
    exit_fd = os.pidfd_open(process.pid)
    try:
        while not path.exists():
            if select.select([exit_fd], [], [], 0.01)[0]:
                raise AssertionError(f"the agent exited with {process.wait()} before {path.name}")
    finally:
        os.close(exit_fd)


ALLOCATE = [sys.executable, "-c", "b = bytearray(1536 * 2**20); b[-1] = 1; print('allocated')"]


def test_a_1_5_gb_allocation_fails_under_the_default_limits_and_succeeds_when_an_operator_lifts_them(
        tmp_path):
    refused = run_command(str(tmp_path), ALLOCATE)
    assert refused["exit_code"] != 0 and "MemoryError" in refused["stderr"]
    with limited(CallLimits(memory_mb=0)):
        allowed = run_command(str(tmp_path), ALLOCATE)
    assert allowed["exit_code"] == 0 and allowed["stdout"] == "allocated\n", allowed


def test_file_size_cpu_seconds_and_processes_are_limited_per_call(tmp_path):
    with limited(CallLimits(file_mb=1, cpu_seconds=1, processes=7)):
        big = run_command(str(tmp_path), ["bash", "-c", "head -c 4194304 /dev/zero > big"])
        spin = run_command(str(tmp_path), [sys.executable, "-c", "while True: pass"])
        limits = run_command(str(tmp_path), ["cat", "/proc/self/limits"])["stdout"]
    assert big["exit_code"] != 0 and (tmp_path / "big").stat().st_size == 1 << 20
    assert spin["exit_code"] in (-signal.SIGXCPU, -signal.SIGKILL)
    processes = next(line for line in limits.splitlines() if line.startswith("Max processes")).split()
    assert processes[2] == processes[3] != "unlimited" and int(processes[2]) >= 7


# -- the sandboxed executor ---------------------------------------------------------------------


class SpawnArgs(BaseModel):
    seconds: float


def spawn_detached(workspace: str, seconds: float) -> str:
    """Start a detached process (possible only with the audit hook out of the way), then wait."""
    import time

    subprocess.Popen(["setsid", "bash", "-c", "echo $$ > pid; exec sleep 1000"], cwd=workspace)
    while not Path(workspace, "pid").exists() or not Path(workspace, "pid").read_text():
        time.sleep(0.01)
    time.sleep(seconds)
    return "spawned"


def allocate(workspace: str, seconds: float) -> int:
    return len(bytearray(1536 * 2**20))


SPAWN = Tool("spawn_detached", "spawn", SpawnArgs, spawn_detached)
ALLOCATE_TOOL = Tool("allocate", "allocate", SpawnArgs, allocate)


class OpenGuard(sandbox_child.Guard):
    """The audit hook with nothing refused: as if a tool had got past it."""

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        return None


@pytest.fixture
def bypassed_guard(monkeypatch):
    monkeypatch.setattr(sandbox_child, "Guard", OpenGuard)
    monkeypatch.setattr(sandbox_child, "_disarm_unaudited_calls", lambda: None)
    monkeypatch.setattr(sandbox_child, "confine_sandboxed_child", lambda **rules: False)  # nor Landlock


@pytest.mark.usefixtures("bypassed_guard")
def test_a_sandboxed_child_that_got_a_process_past_the_guard_leaves_nothing_running(tmp_path):
    assert SandboxedExecutor().run(SPAWN, {"seconds": 0}, workspace=tmp_path, timeout=60) == "spawned"
    assert gone(int((tmp_path / "pid").read_text()))


@pytest.mark.usefixtures("bypassed_guard")
def test_a_timed_out_sandboxed_call_leaves_nothing_running(tmp_path):
    with pytest.raises(ToolTimeoutError):
        SandboxedExecutor().run(SPAWN, {"seconds": 1000}, workspace=tmp_path, timeout=2)
    assert gone(int((tmp_path / "pid").read_text()))


def test_a_sandboxed_tool_is_held_to_the_address_space_limit_on_top_of_what_it_inherits(tmp_path):
    with pytest.raises(ToolFailedError, match="MemoryError"):
        SandboxedExecutor().run(ALLOCATE_TOOL, {"seconds": 0}, workspace=tmp_path, timeout=60)
    with limited(CallLimits(memory_mb=0)):
        assert SandboxedExecutor().run(ALLOCATE_TOOL, {"seconds": 0}, workspace=tmp_path, timeout=60) \
            == 1536 * 2**20


def test_an_operator_lifts_the_memory_limit_of_grapharc_agent_with_a_flag_or_the_environment(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "script.json").write_text(json.dumps([
        {"tool_calls": [{"name": "run_command", "args": {"argv": ALLOCATE}}]}, "done"]))

    def allocation(*options: str, env: dict[str, str] | None = None) -> str:
        trace = tmp_path / f"trace{len(options)}{bool(env)}.jsonl"
        done = subprocess.run([sys.executable, "-m", "grapharc.cli", "agent", "allocate", "--workspace", "ws",
                               "--model", "mock/a", "--script", "script.json", "--allow", "run_command",
                               "--trace", str(trace), *options], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, check=False, env={**os.environ, **(env or {})})
        assert done.returncode == 0, done.stderr
        return trace.read_text()

    assert "MemoryError" in allocation()
    assert "allocated" in allocation("--tool-memory-mb", "0")
    assert "allocated" in allocation(env={"GRAPHARC_TOOL_MEMORY_MB": "4096"})
