"""What the sandboxed executor refuses, what it still allows, and how its children end.

Decision pinned here: a sandboxed tool may read its workspace and the interpreter's runtime
paths, and nothing else, so ``/etc/passwd`` is refused even though it is world-readable.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from grapharc.errors import GraphARCError
from grapharc.harness.executors import ExecutorOptionError, ToolFailedError, ToolTimeoutError
from grapharc.harness.tools import SideEffect, Tool, ToolRegistry
from grapharc.plugins import registry
from grapharc.tools import SandboxedExecutor, SandboxViolation
from grapharc.tools.sandbox import ToolProcessDiedError, UnsandboxableToolError, create_sandboxed_executor

SITE_PACKAGES = sysconfig.get_paths()["purelib"]
PLANTED = Path(SITE_PACKAGES, "grapharc_sandbox_planted.pth")


class PathArgs(BaseModel):
    path: str


class NoArgs(BaseModel):
    pass


class PortArgs(BaseModel):
    port: int


class FdArgs(BaseModel):
    fd: int


class SleepArgs(BaseModel):
    seconds: float


def write_text(workspace: str, path: str) -> str:
    Path(path).write_text("import os; os.system('echo pwned')\n")
    return "written"


def read_text(workspace: str, path: str) -> str:
    return Path(path).read_text()


def swallow_refusal(workspace: str, path: str) -> str:
    try:
        Path(path).write_text("planted")
    except Exception:
        return "carried on"
    return "written"


def disguise_refusal(workspace: str, path: str) -> str:
    try:
        Path(path).write_text("planted")
    except Exception as exc:
        raise RuntimeError("could not save the file") from exc
    return "written"


def import_module(workspace: str, path: str) -> str:
    module = __import__(path)
    return str(module.__name__)


def work_in_workspace(workspace: str) -> list[str]:
    root = Path(workspace)
    (root / "dir" / "sub").mkdir(parents=True)
    (root / "dir" / "a.txt").write_text("a")
    os.rename(root / "dir" / "a.txt", root / "dir" / "b.txt")
    shutil.copyfile(root / "dir" / "b.txt", root / "c.txt")
    os.symlink("c.txt", root / "link")
    (root / "link").unlink()
    (root / "c.txt").unlink()
    shutil.rmtree(root / "dir" / "sub")
    return [*sorted(os.listdir(root / "dir")), (root / "dir" / "b.txt").read_text()]


def link_out(workspace: str, path: str) -> str:
    os.symlink(path, Path(workspace, "escape"))
    return "linked"


def move_out(workspace: str, path: str) -> str:
    Path(workspace, "mine.txt").write_text("mine")
    os.rename(Path(workspace, "mine.txt"), path)
    return "moved"


def open_directory(workspace: str, path: str) -> int:
    return os.open(path, os.O_RDONLY)


def connect(workspace: str, port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        return conn.recv(16).decode()


def run_argv(workspace: str) -> int:
    return subprocess.run(["true"], shell=False, check=False).returncode


def run_with_secret(workspace: str) -> int:
    return subprocess.run(["env"], env={"API_KEY": "sk-secret-value"}, check=False).returncode


def run_system(workspace: str) -> int:
    return os.system("true")


def fork(workspace: str) -> int:
    return os.fork()


def fork_exec_directly(workspace: str) -> int:
    import _posixsubprocess

    return _posixsubprocess.fork_exec(*([None] * 23))


def reload_posixsubprocess(workspace: str) -> int:
    del sys.modules["_posixsubprocess"]
    return importlib.import_module("_posixsubprocess").fork_exec(*([None] * 23))


def signal_the_caller(workspace: str) -> None:
    signal.pidfd_send_signal(os.pidfd_open(os.getppid()), 0)


def load_libc(workspace: str) -> str:
    import ctypes

    return str(ctypes.CDLL(None))


def write_to_inherited(workspace: str, fd: int) -> int:
    return os.write(fd, b"leaked")


def chatty(workspace: str) -> str:
    print("said on stdout", end="")  # no newline: only a flush gets it out
    print("said on stderr", end="", file=sys.stderr)
    return "answered"


def exit_quietly(workspace: str) -> None:
    os._exit(3)


def kill_itself(workspace: str) -> None:
    signal.raise_signal(signal.SIGKILL)


def crash(workspace: str) -> None:
    import faulthandler

    faulthandler._sigsegv()


def leave_group_and_hang(workspace: str, seconds: float) -> str:
    os.setpgid(0, os.getpgid(os.getppid()))  # out of the group the executor kills
    Path(workspace, "pid").write_text(str(os.getpid()))
    time.sleep(seconds)
    return "woke"


def load_native(workspace: str, path: str) -> str:
    name = Path(path).name.split(".")[0]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    return importlib.util.module_from_spec(spec).__name__


def tool(function: Any, args: type[BaseModel] = PathArgs, **flags: Any) -> Tool:
    return Tool(function.__name__, function.__name__, args, function, side_effect=SideEffect.WRITE, **flags)


@pytest.fixture
def sandbox() -> SandboxedExecutor:
    return SandboxedExecutor()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


def test_the_names_the_spec_uses_are_importable_from_grapharc_tools():
    assert SandboxedExecutor.name == "sandboxed"
    assert issubclass(SandboxViolation, GraphARCError)


class Marker:
    def touch(self, workspace: str) -> str:
        Path(workspace, "ran").write_text("ran")
        return "ran"


def closure() -> Any:
    def touch(workspace: str) -> str:
        Path(workspace, "ran").write_text("ran")
        return "ran"
    return touch


@pytest.mark.parametrize("function", [functools.partial(write_text, path="ran"), Marker().touch, closure(),
                                      lambda workspace: Path(workspace, "ran").write_text("ran")],
                         ids=["partial", "bound-method", "closure", "lambda"])
def test_a_function_another_process_cannot_import_is_refused_before_forking(function, sandbox, workspace):
    unimportable = Tool("unimportable", "no import path", NoArgs, function)
    with pytest.raises(UnsandboxableToolError, match=r"'unimportable'.*no import path"):
        sandbox.run(unimportable, {}, workspace=workspace)
    assert not (workspace / "ran").exists()


def test_the_factory_takes_no_options():
    with pytest.raises(ExecutorOptionError, match="retries"):
        create_sandboxed_executor(retries=3)


def test_a_pth_planted_in_site_packages_is_refused_and_no_file_appears(sandbox, workspace):
    with pytest.raises(SandboxViolation) as refused:
        sandbox.run(tool(write_text), {"path": str(PLANTED)}, workspace=workspace)
    assert not PLANTED.exists()
    assert (refused.value.tool, refused.value.target) == ("write_text", str(PLANTED))
    assert "write" in refused.value.operation
    assert "'write_text'" in str(refused.value) and str(PLANTED) in str(refused.value)


def test_a_tool_that_catches_the_refusal_is_still_reported_as_a_violation(sandbox, workspace):
    with pytest.raises(SandboxViolation, match=r"grapharc_sandbox_planted\.pth"):
        sandbox.run(tool(swallow_refusal), {"path": str(PLANTED)}, workspace=workspace)
    assert not PLANTED.exists()


def test_a_refusal_the_tool_turns_into_another_error_is_still_a_violation(sandbox, workspace):
    with pytest.raises(SandboxViolation, match=r"grapharc_sandbox_planted\.pth"):
        sandbox.run(tool(disguise_refusal), {"path": str(PLANTED)}, workspace=workspace)


def test_stdlib_imports_still_work_and_do_not_reach_the_caller(sandbox, workspace):
    fresh = next(name for name in ("colorsys", "wave", "netrc", "mailcap", "sndhdr")
                 if name not in sys.modules)
    assert sandbox.run(tool(import_module), {"path": fresh}, workspace=workspace) == fresh
    assert fresh not in sys.modules


def test_runtime_files_are_readable(sandbox, workspace):
    source = sandbox.run(tool(read_text), {"path": os.__file__}, workspace=workspace)
    assert source == Path(os.__file__).read_text()


def test_reading_outside_the_workspace_and_runtime_paths_is_refused(sandbox, workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    for path in ("/etc/passwd", str(secret)):
        with pytest.raises(SandboxViolation, match="read access") as refused:
            sandbox.run(tool(read_text), {"path": path}, workspace=workspace)
        assert refused.value.target == path


def test_a_symlink_out_of_the_workspace_is_not_a_way_out(sandbox, workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (workspace / "inside").symlink_to(secret)
    with pytest.raises(SandboxViolation, match="read access"):
        sandbox.run(tool(read_text), {"path": "inside"}, workspace=workspace)
    with pytest.raises(SandboxViolation, match="symlink pointing outside"):
        sandbox.run(tool(link_out), {"path": str(secret)}, workspace=workspace)
    assert not (workspace / "escape").exists()


def test_moving_a_file_out_of_the_workspace_is_refused(sandbox, workspace, tmp_path):
    with pytest.raises(SandboxViolation, match=r"change access \(os.rename\)"):
        sandbox.run(tool(move_out), {"path": str(tmp_path / "moved.txt")}, workspace=workspace)
    assert not (tmp_path / "moved.txt").exists()


def relative_to_descriptor(workspace: str, path: str) -> str:
    directory = os.open(Path(workspace, "sub"), os.O_RDONLY)
    fd = os.open(path, os.O_RDONLY, dir_fd=directory)
    return os.read(fd, 100).decode()


def test_no_directory_can_be_opened_as_a_descriptor(sandbox, workspace, tmp_path):
    (workspace / "sub").mkdir()
    for path in (SITE_PACKAGES, str(workspace / "sub")):
        with pytest.raises(SandboxViolation, match="opening a directory as a descriptor"):
            sandbox.run(tool(open_directory), {"path": path}, workspace=workspace)


def test_a_symlink_out_cannot_be_followed_relative_to_a_directory_descriptor(sandbox, workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "link").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(SandboxViolation, match="opening a directory as a descriptor"):
        sandbox.run(tool(relative_to_descriptor), {"path": "link"}, workspace=workspace)


def test_files_and_directories_in_the_workspace_are_the_tools_to_change(sandbox, workspace):
    assert sandbox.run(tool(work_in_workspace, NoArgs), {}, workspace=workspace) == ["b.txt", "a"]
    assert (workspace / "dir" / "b.txt").read_text() == "a"


@pytest.fixture
def listener() -> Any:
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


def test_a_socket_is_refused_without_needs_network(sandbox, workspace, listener):
    port = listener.getsockname()[1]
    with pytest.raises(SandboxViolation, match=r"network access .* without needs_network"):
        sandbox.run(tool(connect, PortArgs), {"port": port}, workspace=workspace)


def test_a_tool_that_needs_the_network_may_connect(sandbox, workspace, listener):
    port = listener.getsockname()[1]
    listener.settimeout(30)
    child = os.fork()
    if child == 0:  # the server side: accept one connection and greet it
        conn, _ = listener.accept()
        conn.sendall(b"hello")
        conn.close()
        os._exit(0)
    try:
        assert sandbox.run(tool(connect, PortArgs, needs_network=True), {"port": port},
                           workspace=workspace) == "hello"
    finally:
        os.waitpid(child, 0)


@pytest.mark.parametrize("function", [run_argv, run_system, fork, fork_exec_directly, signal_the_caller])
def test_starting_a_process_is_refused_every_time(function, sandbox, workspace):
    for _ in range(3):
        with pytest.raises(SandboxViolation, match="starting or signalling a process"):
            sandbox.run(tool(function, NoArgs), {}, workspace=workspace)


def test_a_refused_process_is_named_without_its_environment(sandbox, workspace):
    with pytest.raises(SandboxViolation) as refused:
        sandbox.run(tool(run_with_secret, NoArgs), {}, workspace=workspace)
    assert "['env']" in refused.value.target and "sk-secret-value" not in str(refused.value)


def test_a_disarmed_module_cannot_be_loaded_afresh(sandbox, workspace):
    with pytest.raises(SandboxViolation, match="disarmed module _posixsubprocess"):
        sandbox.run(tool(reload_posixsubprocess, NoArgs), {}, workspace=workspace)


def test_native_code_through_ctypes_is_refused(sandbox, workspace):
    with pytest.raises(SandboxViolation, match="native code"):
        sandbox.run(tool(load_libc, NoArgs), {}, workspace=workspace)


def test_descriptors_the_caller_holds_are_not_handed_to_the_tool(sandbox, workspace, tmp_path):
    outside = tmp_path / "outside.log"
    fd = os.open(outside, os.O_WRONLY | os.O_CREAT)
    try:
        sandbox.run(tool(write_to_inherited, FdArgs), {"fd": fd}, workspace=workspace)
    finally:
        os.close(fd)
    assert outside.read_bytes() == b""


def test_what_a_tool_prints_reaches_the_callers_descriptors_before_its_answer(sandbox, workspace, capfd):
    assert sandbox.run(tool(chatty, NoArgs), {}, workspace=workspace) == "answered"
    printed = capfd.readouterr()
    assert (printed.out, printed.err) == ("said on stdout", "said on stderr")


@pytest.mark.parametrize(("function", "how"), [(exit_quietly, "exited with status 3"),
                                               (kill_itself, "killed by signal SIGKILL"),
                                               (crash, "killed by signal SIGSEGV")])
def test_a_child_that_dies_without_answering_names_the_tool_and_how(function, how, sandbox, workspace):
    with pytest.raises(ToolProcessDiedError) as died:
        sandbox.run(tool(function, NoArgs), {}, workspace=workspace)
    assert f"{function.__name__!r}" in str(died.value) and how in str(died.value)


def test_a_tool_that_leaves_its_process_group_is_still_killed(sandbox, workspace):
    with pytest.raises(ToolTimeoutError):
        sandbox.run(tool(leave_group_and_hang, SleepArgs), {"seconds": 60}, workspace=workspace, timeout=2)
    with pytest.raises(ProcessLookupError):
        os.kill(int((workspace / "pid").read_text()), 0)


def unloaded_extension() -> str:
    """The file of a standard extension module nothing here has imported yet."""
    name = next(name for name in ("_lzma", "_bz2", "_crypt", "_lsprof", "_csv", "_curses")
                if name not in sys.modules and importlib.util.find_spec(name) is not None)
    return importlib.util.find_spec(name).origin


def test_native_code_loads_from_the_runtime_paths_but_not_from_the_workspace(sandbox, workspace):
    runtime = unloaded_extension()
    planted = workspace / Path(runtime).name
    shutil.copyfile(runtime, planted)
    loaded = sandbox.run(tool(load_native), {"path": runtime}, workspace=workspace)
    assert loaded == Path(runtime).name.split(".")[0]
    with pytest.raises(SandboxViolation, match="loading native code") as refused:
        sandbox.run(tool(load_native), {"path": str(planted)}, workspace=workspace)
    assert refused.value.target == str(planted)


def test_an_empty_search_path_entry_still_means_the_callers_directory(sandbox, workspace, monkeypatch):
    (workspace / "planted_module.py").write_text("WHERE = 'workspace'\n")
    monkeypatch.syspath_prepend("")
    with pytest.raises(ToolFailedError, match="ModuleNotFoundError"):
        sandbox.run(tool(import_module), {"path": "planted_module"}, workspace=workspace)


def test_run_command_raises_sandbox_violation_every_time(sandbox, workspace):
    if "run_command" not in registry("tools"):
        pytest.skip("run_command is not installed (it comes with the seven tools)")
    run_command = ToolRegistry.from_plugins(["run_command"]).get("run_command")
    for argv in (["true"], [sys.executable, "-c", "print(1)"], ["true"]):
        with pytest.raises(SandboxViolation, match="starting or signalling a process"):
            sandbox.run(run_command, {"argv": argv}, workspace=workspace, timeout=30)


@pytest.fixture
def many_descriptors() -> Any:
    """Hold enough open descriptors that the executor's own pipe is numbered past 1023."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the descriptor limit ({hard}) is too low")
    resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    yield held
    for fd in held:
        os.close(fd)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_caller_holding_many_descriptors_can_still_run_tools(sandbox, workspace, many_descriptors):
    assert max(many_descriptors) > 1024
    assert sandbox.run(tool(read_text), {"path": os.__file__}, workspace=workspace, timeout=30)


def test_a_search_path_entry_holding_the_workspace_grants_imports_not_its_other_files(
        sandbox, workspace, tmp_path, monkeypatch):
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "sandbox_sibling_helper.py").write_text("NAME = 'helper'\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # as `python -m` run from a parent directory does
    assert sandbox.run(tool(import_module), {"path": "sandbox_sibling_helper"},
                       workspace=workspace) == "sandbox_sibling_helper"
    with pytest.raises(SandboxViolation, match="read access"):
        sandbox.run(tool(read_text), {"path": str(tmp_path / "secret.txt")}, workspace=workspace)
