"""run_command: an argv list, no shell, cwd in the workspace, an allowlisted environment, and a
timeout that kills the whole process group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from grapharc.harness.executors import LocalExecutor, ToolTimeoutError
from grapharc.harness.tools import ToolArgumentError
from grapharc.tools import ToolInputError, WorkspaceEscape
from grapharc.tools.command import MAX_OUTPUT_BYTES, SETTABLE
from grapharc.tools.reaper import supervise

PRINT_ENV = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]


def gone(pid: int) -> bool:
    """Whether ``pid`` has died (a zombie waiting for its reaper counts as dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_until_gone(pid: int) -> bool:
    """SIGKILL is delivered asynchronously: wait (for the event, not a duration) until it lands."""
    for _ in range(1000):
        if gone(pid):
            return True
        time.sleep(0.01)
    return False


def test_a_command_returns_its_exit_code_and_both_outputs(call):
    result = call("run_command", argv=["bash", "-c", "echo out; echo err >&2; exit 3"])
    assert result == {"exit_code": 3, "timed_out": False, "stdout": "out\n", "stderr": "err\n"}


@pytest.mark.parametrize("argv", ["ls -la", "echo hi && rm -rf /"])
def test_a_single_string_is_refused_never_split(call, tools, workspace, argv):
    with pytest.raises(ToolArgumentError, match="not one string; a command line is never split") as caught:
        call("run_command", argv=argv)
    assert "bash" in str(caught.value)  # the message shows how to spell a pipeline
    with pytest.raises(ToolArgumentError, match="not one string"):  # the function checks it too
        tools.get("run_command").function(str(workspace), argv=argv)


def test_arguments_reach_the_program_verbatim_with_no_shell_between(call, workspace):
    result = call("run_command", argv=["echo", "$HOME", "; touch pwned", "`id`", "*"])
    assert result["stdout"] == "$HOME ; touch pwned `id` *\n"
    assert not (workspace / "pwned").exists()


@pytest.mark.parametrize("argv", [[], [""], ["echo", 1], ["echo", "a\x00b"]])
def test_an_argv_that_is_not_a_non_empty_list_of_strings_is_refused(call, argv):
    with pytest.raises(ToolArgumentError):
        call("run_command", argv=argv)


def test_cwd_is_resolved_inside_the_workspace_and_home_is_the_workspace(call, workspace):
    (workspace / "sub").mkdir()
    result = call("run_command", argv=["bash", "-c", 'pwd; echo "$HOME"'], cwd="sub")
    assert result["stdout"] == f"{workspace / 'sub'}\n{workspace}\n"


@pytest.mark.parametrize("cwd", ["..", "/tmp", "../ws-evil"])
def test_a_cwd_outside_the_workspace_is_refused(call, cwd):
    with pytest.raises(WorkspaceEscape):
        call("run_command", argv=["pwd"], cwd=cwd)


def test_a_cwd_that_is_not_a_directory_is_named(call, workspace):
    (workspace / "a.txt").write_text("x")
    with pytest.raises(ToolInputError, match=r"cwd 'a\.txt' is not a directory"):
        call("run_command", argv=["pwd"], cwd="a.txt")


def test_the_environment_is_an_allowlist_and_host_secrets_stay_behind(call, workspace, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    seen = json.loads(call("run_command", argv=PRINT_ENV, env={"CI": "1"})["stdout"])
    assert "OPENROUTER_API_KEY" not in seen and "sk-secret" not in json.dumps(seen)
    assert seen["HOME"] == str(workspace) and seen["CI"] == "1" and seen["LANG"] == "C.UTF-8"
    assert set(seen) <= {"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "CI"}


@pytest.mark.parametrize("name", ["LD_PRELOAD", "HOME", "PATH", "OPENROUTER_API_KEY"])
def test_setting_a_variable_outside_the_allowlist_is_refused_with_the_allowed_names(call, name):
    with pytest.raises(ToolArgumentError, match=f"env may not set '{name}'") as caught:
        call("run_command", argv=["true"], env={name: "x"})
    assert all(allowed in str(caught.value) for allowed in SETTABLE)


def test_a_missing_program_is_named(call):
    with pytest.raises(ToolInputError, match="cannot run 'no-such-program-grapharc'"):
        call("run_command", argv=["no-such-program-grapharc"])


def test_output_past_the_cap_is_cut_and_the_total_is_given(call):
    result = call("run_command", argv=[sys.executable, "-c", "print('x' * 200000, end='')"])
    assert result["stdout"] == "x" * MAX_OUTPUT_BYTES + \
        f"\n[run_command: stdout cut to its first {MAX_OUTPUT_BYTES} of 200000 bytes]"


def test_the_timeout_kills_the_whole_process_group(call, workspace):
    script = "sleep 300 & echo $! > child.pid; sleep 300"
    result = call("run_command", argv=["bash", "-c", script], timeout=2)  # time to write the pid file
    assert result["timed_out"] is True and result["exit_code"] == -9
    assert wait_until_gone(int((workspace / "child.pid").read_text()))


def test_a_child_that_ignores_sigterm_is_killed_all_the_same(call, workspace):
    script = "trap '' TERM; echo $$ > leader.pid; while true; do sleep 0.1; done"
    result = call("run_command", argv=["bash", "-c", script], timeout=2)
    assert result["timed_out"] is True
    assert wait_until_gone(int((workspace / "leader.pid").read_text()))


def test_what_a_command_leaves_running_is_killed_when_it_exits(call, workspace):
    result = call("run_command", argv=["bash", "-c", "sleep 300 & echo $! > child.pid; echo done"])
    assert result == {"exit_code": 0, "timed_out": False, "stdout": "done\n", "stderr": ""}
    assert wait_until_gone(int((workspace / "child.pid").read_text()))


def test_the_executors_deadline_also_kills_the_group(tools, workspace):
    script = "sleep 300 & echo $! > child.pid; wait"
    with pytest.raises(ToolTimeoutError):
        LocalExecutor().run(tools.get("run_command"), {"argv": ["bash", "-c", script], "timeout": 300},
                            workspace=workspace, timeout=2.0)
    assert wait_until_gone(int((workspace / "child.pid").read_text()))


@pytest.mark.parametrize("timeout", [0, -1, 601])
def test_a_timeout_outside_the_schema_is_refused(call, timeout):
    with pytest.raises(ToolArgumentError, match="timeout"):
        call("run_command", argv=["true"], timeout=timeout)


def test_stdin_is_empty_so_a_command_waiting_for_input_ends(call):
    assert call("run_command", argv=["cat"]) == {"exit_code": 0, "timed_out": False, "stdout": "",
                                                 "stderr": ""}


def test_without_a_pidfd_the_exit_is_polled_for_and_leftovers_are_still_killed(call, workspace, monkeypatch):
    monkeypatch.delattr("os.pidfd_open")  # as on systems other than Linux
    result = call("run_command", argv=["bash", "-c", "sleep 300 & echo $! > child.pid; echo done"])
    assert result == {"exit_code": 0, "timed_out": False, "stdout": "done\n", "stderr": ""}
    assert wait_until_gone(int((workspace / "child.pid").read_text()))
    timed = call("run_command", argv=["bash", "-c", "echo $$ > leader.pid; exec sleep 300"], timeout=2)
    assert timed["timed_out"] is True and wait_until_gone(int((workspace / "leader.pid").read_text()))


@pytest.fixture
def sigchld_ignored():
    """This process ignores SIGCHLD, as it does after some library in it set ``SIG_IGN`` (the
    cause of calls ending ``-9`` or timing out inside the whole suite)."""
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGCHLD, before)


def ignores_sigchld(status: str) -> bool:
    """Whether a ``/proc/PID/status`` text has SIGCHLD in its ignored set."""
    mask = next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1]
    return bool(int(mask, 16) & (1 << (signal.SIGCHLD - 1)))


@pytest.mark.usefixtures("sigchld_ignored")
def test_a_caller_that_ignores_sigchld_still_gets_the_exit_code_and_leftovers_killed(call, workspace):
    result = call("run_command", argv=["bash", "-c", "sleep 300 & echo $! > child.pid; exit 3"], timeout=20)
    assert (result["exit_code"], result["timed_out"]) == (3, False)
    assert wait_until_gone(int((workspace / "child.pid").read_text()))


@pytest.mark.usefixtures("sigchld_ignored")
def test_the_program_does_not_inherit_an_ignored_sigchld(call):
    result = call("run_command", argv=["cat", "/proc/self/status"])
    assert result["exit_code"] == 0 and not ignores_sigchld(result["stdout"])


@pytest.mark.usefixtures("sigchld_ignored")
def test_a_call_from_another_thread_of_a_caller_ignoring_sigchld_works_too(call):
    results: list[dict] = []
    worker = threading.Thread(target=lambda: results.append(call("run_command", argv=["true"])))
    worker.start()
    worker.join()
    assert results == [{"exit_code": 0, "timed_out": False, "stdout": "", "stderr": ""}]


class PopenSeenExited(subprocess.Popen):
    """A Popen that returns only once its process has exited (not reaped: ``WNOWAIT``), so the
    object is dropped after the exit, the moment its finalizer could reap the process."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)


def test_a_program_that_exits_before_it_is_watched_keeps_its_exit_code(call, monkeypatch):
    monkeypatch.setattr(subprocess, "Popen", PopenSeenExited)
    assert call("run_command", argv=["bash", "-c", "exit 7"])["exit_code"] == 7


def test_a_keeper_whose_own_code_fails_still_kills_what_the_call_left(call, workspace, monkeypatch):
    child_pid = workspace / "child.pid"

    def broken(pid: int) -> int:
        # fail only once the program has printed and started its child (waiting for that event,
        # not a duration): failing earlier would kill it before it did, on a busy machine
        for _ in range(3000):
            if child_pid.exists() and child_pid.read_text().endswith("\n"):
                break
            time.sleep(0.01)
        raise RuntimeError("the keeper's supervision failed")

    monkeypatch.setattr(supervise, "_exit_fd", broken)
    result = call("run_command", argv=["bash", "-c", "echo done; sleep 300 & echo $! > child.pid"])
    assert (result["exit_code"], result["stdout"]) == (-9, "done\n")  # no report: lost, said as killed
    assert wait_until_gone(int(child_pid.read_text()))
