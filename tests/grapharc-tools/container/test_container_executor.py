"""The container executor against the fake Docker engine: the exact spec it asks for, the refusals
it makes before any container exists, and cleanup on every path."""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from container_images import BARE, IMAGE
from container_tools import AS_TUPLE, CHATTY, DIE, FETCH, MIRROR, NOTE, WHEN, NoArgs, NoteArgs, write_note
from fake_docker import FakeDockerEngine

from grapharc.harness.executors import ExecutorOptionError, ToolFailedError, ToolTimeoutError
from grapharc.harness.setup import open_executor
from grapharc.harness.tools import Tool
from grapharc.runtime.deadline import InvalidDeadlineError
from grapharc.testing.executor_kit import ADD, FAIL, SLEEP
from grapharc.tools import ContainerExecutor
from grapharc.tools.container import (
    ContainerImageMissingError,
    ContainerNoResultError,
    ContainerUnavailableError,
    NotJSONError,
    ToolNotPortableError,
    create_container_executor,
)
from grapharc.tools.container.spec import default_user

ENGINE_PATHS = (r"/version", r"/images/[^/]+/json", r"/containers/create", r"/containers/\w+(/\w+)?")


def executor(engine: FakeDockerEngine, image: str = IMAGE, **options: Any) -> ContainerExecutor:
    return ContainerExecutor(image, base_url=engine.base_url, **options)


def created(engine: FakeDockerEngine) -> list[dict[str, Any]]:
    return [request.body for request in engine.calls("POST", r"/containers/create")]


def test_the_container_has_the_workspace_as_its_only_mount_and_every_lock_on(engine: FakeDockerEngine,
                                                                             tmp_path: Path) -> None:
    assert executor(engine).run(ADD, {"a": 1, "b": 2}, workspace=tmp_path) == 3
    [spec] = created(engine)
    host = spec["HostConfig"]
    assert host["Mounts"] == [{"Type": "bind", "Source": str(tmp_path), "Target": "/workspace",
                               "ReadOnly": False}]
    assert "Binds" not in host and "VolumesFrom" not in host and "Volumes" not in spec
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"] and "CapAdd" not in host
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["ReadonlyRootfs"] is True and not host.get("Privileged")
    assert host["Tmpfs"] == {"/tmp": "rw,noexec,nosuid,nodev,size=67108864"}
    assert host["Memory"] == host["MemorySwap"] == 512 * 2**20
    assert host["PidsLimit"] == 128
    assert spec["User"] == default_user() and spec["User"].partition(":")[0] not in ("0", "root")
    assert spec["WorkingDir"] == "/workspace"
    assert spec["Image"] == IMAGE
    assert spec["Entrypoint"] == ["python", "-m", "grapharc.tools.container.runner"]
    assert spec["Env"] == ["HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1"]
    assert spec["Tty"] is False and spec["OpenStdin"] is spec["StdinOnce"] is True
    [attach] = engine.calls("POST", r"/containers/\w+/attach")
    assert attach.query == {"stdin": "1", "stream": "1"}


def test_options_reach_the_spec(engine: FakeDockerEngine, tmp_path: Path) -> None:
    executor(engine, memory_mb=64, pids_limit=16, tmp_mb=1, user="4242:4343").run(
        ADD, {"a": 1, "b": 2}, workspace=tmp_path)
    [spec] = created(engine)
    assert spec["HostConfig"]["Memory"] == spec["HostConfig"]["MemorySwap"] == 64 * 2**20
    assert spec["HostConfig"]["PidsLimit"] == 16
    assert spec["HostConfig"]["Tmpfs"]["/tmp"].endswith("size=1048576")
    assert spec["User"] == "4242:4343"


def test_only_a_tool_that_declares_the_network_gets_one(engine: FakeDockerEngine, tmp_path: Path) -> None:
    run = executor(engine)
    assert run.run(FETCH, {}, workspace=tmp_path) == "fetched"
    assert run.run(ADD, {"a": 1, "b": 1}, workspace=tmp_path) == 2
    assert [spec["HostConfig"]["NetworkMode"] for spec in created(engine)] == ["bridge", "none"]


def test_nothing_is_ever_pulled_and_every_container_is_removed(engine: FakeDockerEngine,
                                                               tmp_path: Path) -> None:
    run = executor(engine)
    run.run(ADD, {"a": 1, "b": 1}, workspace=tmp_path)
    with pytest.raises(ToolFailedError):
        run.run(FAIL, {"reason": "no"}, workspace=tmp_path)
    with pytest.raises(ContainerNoResultError):
        run.run(DIE, {"code": 3}, workspace=tmp_path)
    assert engine.containers == {} and len(engine.removed) == 3
    assert all(request.query.get("force") == "True" for request in engine.calls("DELETE", r"/containers/\w+"))
    assert [r.path for r in engine.requests if not any(re.fullmatch(p, r.path)
                                                       for p in ENGINE_PATHS)] == []
    assert not [r for r in engine.requests if r.path.startswith(("/images/create", "/images/load"))]


def test_a_missing_image_is_named_and_never_pulled(engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(ContainerImageMissingError, match="'absent:1'") as caught:
        executor(engine, "absent:1").run(ADD, {"a": 1, "b": 1}, workspace=tmp_path)
    assert "docker pull absent:1" in caught.value.hint
    assert created(engine) == [] and not engine.calls("POST", r"/images/create")


def test_the_tool_writes_in_the_workspace_as_its_working_directory(engine: FakeDockerEngine,
                                                                   tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("x")
    assert executor(engine).run(NOTE, {"name": "new.txt", "text": "hello"}, workspace=tmp_path) == [
        "new.txt", "old.txt"]
    assert (tmp_path / "new.txt").read_text() == "hello"


def test_a_tools_prints_cannot_forge_or_spoil_the_answer(engine: FakeDockerEngine, tmp_path: Path) -> None:
    assert executor(engine).run(CHATTY, {}, workspace=tmp_path) == "quiet"
    container = engine.removed[-1]
    assert container.stdout is not None and container.stderr is not None
    assert b"forged" not in container.stdout.read_bytes()
    assert b"straight to fd 1" in container.stderr.read_bytes()


def test_a_tools_exception_comes_back_as_tool_failed_with_its_type_and_message(
        engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(ToolFailedError) as caught:
        executor(engine).run(FAIL, {"reason": "deliberate"}, workspace=tmp_path)
    assert (caught.value.tool, caught.value.exception_type, caught.value.message) == (
        "fail", "ToolFailed", "deliberate")


def test_a_container_that_exits_without_an_answer_names_tool_exit_code_and_logs(
        engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(ContainerNoResultError, match=r"(?s)tool 'die'.* code 7.*about to die"):
        executor(engine).run(DIE, {"code": 7}, workspace=tmp_path)


def test_an_image_without_grapharc_says_so_through_its_logs(engine: FakeDockerEngine, tmp_path: Path) -> None:
    engine.images["plain-python:3"] = type(engine.images[IMAGE])(python="/usr/bin/python3")
    if not Path("/usr/bin/python3").exists():
        pytest.skip("needs a system python without GraphARC at /usr/bin/python3")
    with pytest.raises(ContainerNoResultError, match="No module named 'grapharc'"):
        executor(engine, "plain-python:3").run(ADD, {"a": 1, "b": 1}, workspace=tmp_path)


def test_a_tool_the_image_cannot_import_is_refused_inside_the_container(engine: FakeDockerEngine,
                                                                         tmp_path: Path) -> None:
    with pytest.raises(ToolNotPortableError, match="container_tools:write_note cannot be imported"):
        executor(engine, BARE).run(NOTE, {"name": "a", "text": "b"}, workspace=tmp_path)
    assert not (tmp_path / "a").exists() and engine.containers == {}


def test_a_result_that_is_not_plain_json_is_refused_not_converted(engine: FakeDockerEngine,
                                                                  tmp_path: Path) -> None:
    with pytest.raises(NotJSONError, match="'as_tuple' returned result: tuple"):
        executor(engine).run(AS_TUPLE, {}, workspace=tmp_path)


def test_a_timed_out_container_is_killed_then_removed(engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(ToolTimeoutError, match="'sleep'"):
        executor(engine).run(SLEEP, {"seconds": 60}, workspace=tmp_path, timeout=0.5)
    [container] = engine.removed
    assert container.killed and container.process is not None and container.process.returncode is not None
    ordered = [(r.method, r.path.rsplit("/", 1)[-1]) for r in engine.requests if container.id in r.path]
    assert ordered.index(("POST", "kill")) < ordered.index(("DELETE", container.id))


@pytest.mark.parametrize(("timeout", "error"), [
    (float("nan"), InvalidDeadlineError), ("5", InvalidDeadlineError), (True, InvalidDeadlineError),
    (0, ToolTimeoutError), (-1.0, ToolTimeoutError)])
def test_a_timeout_that_is_no_time_is_refused_before_a_container_starts(
        timeout: Any, error: type[Exception], engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(error, match="'add'"):
        executor(engine).run(ADD, {"a": 1, "b": 1}, workspace=tmp_path, timeout=timeout)
    assert engine.requests == []


def test_an_infinite_timeout_is_no_limit(engine: FakeDockerEngine, tmp_path: Path) -> None:
    assert executor(engine).run(ADD, {"a": 1, "b": 1}, workspace=tmp_path, timeout=float("inf")) == 2


def closure_tool() -> Tool:
    def inner(workspace: str) -> str:
        return "inner"
    return Tool("inner", "a closure", NoArgs, inner)


class Holder:
    def method(self, workspace: str) -> str:
        return "method"


@pytest.mark.parametrize("tool", [
    Tool("lam", "a lambda", NoArgs, lambda workspace: "lambda"),
    Tool("part", "a partial", NoteArgs, functools.partial(write_note)),
    Tool("bound", "a bound method", NoArgs, Holder().method),
    closure_tool(),
], ids=["lambda", "partial", "bound-method", "closure"])
def test_a_tool_without_an_import_path_is_refused_before_a_container_starts(
        tool: Tool, engine: FakeDockerEngine, tmp_path: Path) -> None:
    args = {"name": "n", "text": "t"} if tool.name == "part" else {}
    with pytest.raises(ToolNotPortableError, match=repr(tool.name)):
        executor(engine).run(tool, args, workspace=tmp_path)
    assert engine.requests == []


def test_a_function_from_a_script_is_refused_before_a_container_starts(engine: FakeDockerEngine,
                                                                       tmp_path: Path) -> None:
    def script_function(workspace: str) -> str:
        return "main"
    script_function.__module__, script_function.__qualname__ = "__main__", "script_function"
    with pytest.raises(ToolNotPortableError, match="__main__"):
        executor(engine).run(Tool("script", "from a script", NoArgs, script_function), {}, workspace=tmp_path)
    assert engine.requests == []


def test_arguments_that_cannot_cross_as_json_are_refused_before_a_container_starts(
        engine: FakeDockerEngine, tmp_path: Path) -> None:
    with pytest.raises(NotJSONError, match=r"'when': arguments\.when: datetime"):
        executor(engine).run(WHEN, {"when": "2026-12-01T10:00:00"}, workspace=tmp_path)
    assert engine.requests == []


def test_hostile_nesting_is_refused_before_a_container_starts_and_fair_nesting_crosses(
        engine: FakeDockerEngine, tmp_path: Path) -> None:
    deep: list[Any] = []
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(NotJSONError, match="nested deeper than 200"):
        executor(engine).run(MIRROR, {"value": deep}, workspace=tmp_path)
    assert engine.requests == []
    fair: list[Any] = []
    for _ in range(150):
        fair = [fair]
    assert executor(engine).run(MIRROR, {"value": fair}, workspace=tmp_path) == fair


def test_a_megabyte_of_arguments_crosses_intact_on_stdin(engine: FakeDockerEngine, tmp_path: Path) -> None:
    text = "naïve ☃ \u0000 \"quoted\"\n" * 50_000
    assert executor(engine).run(NOTE, {"name": "big.txt", "text": text}, workspace=tmp_path) == ["big.txt"]
    assert (tmp_path / "big.txt").read_text(encoding="utf-8") == text


@pytest.mark.parametrize(("options", "named"), [
    ({"memory_mb": float("nan")}, "memory_mb"), ({"memory_mb": float("inf")}, "memory_mb"),
    ({"memory_mb": 0}, "memory_mb"), ({"memory_mb": True}, "memory_mb"), ({"memory_mb": "512"}, "memory_mb"),
    ({"pids_limit": 1.5}, "pids_limit"), ({"pids_limit": -1}, "pids_limit"), ({"tmp_mb": -2}, "tmp_mb"),
    ({"user": "0"}, "user"), ({"user": "root"}, "user"), ({"user": "0:1000"}, "user"),
    ({"user": "a b"}, "user"), ({"image": ""}, "image"), ({"image": "has space"}, "image"),
    ({"volumes": ["/:/host"]}, "volumes"), ({"privileged": True}, "privileged"),
])
def test_options_that_would_weaken_or_break_the_container_are_refused(options: dict[str, Any],
                                                                      named: str) -> None:
    options = {"image": IMAGE, **options}
    with pytest.raises(ExecutorOptionError, match=named):
        create_container_executor(**options)


def test_the_default_user_is_the_callers_and_a_root_caller_gets_nobody(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    monkeypatch.setattr(os, "getgid", lambda: 1001)
    assert default_user() == "1000:1001"
    monkeypatch.setattr(os, "getuid", lambda: 0)
    assert default_user() == "65534:65534"
    assert ContainerExecutor(IMAGE).options.user == "65534:65534"


def test_the_executor_is_installed_under_its_name_and_takes_its_image_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHARC_CONTAINER_IMAGE", raising=False)
    with pytest.raises(ExecutorOptionError, match="needs an image") as caught:
        open_executor("container")
    assert "GRAPHARC_CONTAINER_IMAGE" in caught.value.hint
    monkeypatch.setenv("GRAPHARC_CONTAINER_IMAGE", "my-tools:2")
    opened = open_executor("container")
    assert isinstance(opened, ContainerExecutor) and opened.options.image == "my-tools:2"


def test_no_engine_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ContainerUnavailableError, match="no Docker engine answers at unix://"):
        ContainerExecutor(IMAGE, base_url=f"unix://{tmp_path}/absent.sock").run(
            ADD, {"a": 1, "b": 1}, workspace=tmp_path)


def test_without_the_docker_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(ContainerUnavailableError) as caught:
        ContainerExecutor(IMAGE).run(ADD, {"a": 1, "b": 1}, workspace=tmp_path)
    assert "grapharc-tools[container]" in caught.value.hint


def test_the_fake_engine_speaks_the_real_sdks_dialect(engine: FakeDockerEngine) -> None:
    import docker

    client = docker.DockerClient(base_url=engine.base_url)
    assert client.ping() is True
    assert client.version()["ApiVersion"] == "1.44"
    assert client.images.get(IMAGE).tags == [IMAGE]
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get("absent:1")
