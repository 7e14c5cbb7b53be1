"""What a forked child does for one sandboxed call: confine itself, run the tool, answer, exit.

The child never returns into the caller's code: it leaves through ``os._exit`` whatever
happens, after writing one JSON reply to the pipe (``{"result": ...}``, ``{"violation": ...}``
or ``{"error": ...}``). A child that dies before that leaves the pipe empty.
"""

from __future__ import annotations

import _imp
import gc
import importlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import Any, NoReturn

from grapharc.tools.beneath import confine_sandboxed_child
from grapharc.tools.jsondata import json_problem
from grapharc.tools.reaper.keeper import blank_inherited_descriptors
from grapharc.tools.sandbox.errors import SandboxViolation
from grapharc.tools.sandbox.grants import Grants
from grapharc.tools.sandbox.guard import UNAUDITED, Guard


def serve(reply_fd: int, *, tool: str, import_path: str, workspace: str, arguments: str,
          grants: Grants, network: bool) -> NoReturn:
    """Run ``import_path`` with the JSON ``arguments`` under a guard, write the reply, exit."""
    status = 0
    try:
        reply = _call(reply_fd, tool, import_path, workspace, arguments, grants, network)
    except BaseException as exc:  # nothing may unwind into the parent's code in this process
        reply = _error_reply(exc)
    flush_output()  # what the tool printed goes out before the answer, which ends the call
    try:
        _write_all(reply_fd, reply.encode("utf-8"))
        os.close(reply_fd)  # the caller has its answer now, not after this process is torn down
    except BaseException:
        status = 70
    os._exit(status)


def flush_output() -> None:
    """Flush Python's buffered stdout and stderr; a missing or broken stream is left alone."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            if stream is not None:
                stream.flush()


def _call(reply_fd: int, tool: str, import_path: str, workspace: str, arguments: str, grants: Grants,
          network: bool) -> str:
    _isolate(reply_fd, workspace)
    confine_sandboxed_child(read=grants.read, imports=grants.imports, write=grants.write)
    guard = Guard(tool, workspace, grants, network=network)
    _guard_native_loading(guard)
    sys.addaudithook(guard)
    try:
        result = _resolve(import_path)(workspace, **json.loads(arguments))
    except SandboxViolation as exc:
        return _violation_reply(guard.violation or exc)
    except BaseException:
        if guard.violation is None:
            raise
        return _violation_reply(guard.violation)  # whatever the tool turned a refusal into, it was one
    if guard.violation is not None:  # the tool caught a refusal; its result is not trusted
        return _violation_reply(guard.violation)
    problem = json_problem(result, "result")
    if problem is not None:
        return json.dumps({"error": {"type": "UnsandboxableToolError",
                                     "message": f"its result is not plain JSON data ({problem})"}})
    return json.dumps({"result": result}, allow_nan=False)


def _isolate(reply_fd: int, workspace: str) -> None:
    """Own process group, cwd in the workspace, no inherited descriptors beyond stdio and the pipe."""
    os.setpgid(0, 0)
    _fresh_output_streams()
    sys.path[:] = [entry or os.getcwd() for entry in sys.path]  # "" meant the caller's cwd, not the workspace
    os.chdir(workspace)
    blank_inherited_descriptors(keep=(1, 2, reply_fd))
    gc.freeze()  # the parent's objects are never collected here, so their pages stay shared
    sys.dont_write_bytecode = True  # a .pyc next to a runtime module would be a refused write
    shutil._use_fd_functions = False  # type: ignore[attr-defined]  # rmtree by path: no directory descriptors
    _disarm_unaudited_calls()


def _fresh_output_streams() -> None:
    """New ``sys.stdout``/``sys.stderr`` on descriptors 1 and 2, line-buffered.

    The copied ones may hold a lock another of the caller's threads had at the fork, which
    nothing here would ever release; new objects start unlocked.
    """
    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        if old is not None:
            with suppress(OSError, ValueError):
                stream = open(fd, "w", buffering=1, closefd=False, errors="backslashreplace",  # noqa: SIM115
                              encoding=getattr(old, "encoding", None) or "utf-8")
                setattr(sys, name, stream)


def _disarm_unaudited_calls() -> None:
    """Replace the process calls CPython raises no audit event for by ones that raise it."""
    for module_name, names in UNAUDITED.items():
        module = importlib.import_module(module_name)
        for name in names:
            if hasattr(module, name):
                setattr(module, name, _audited(f"{module_name}.{name}"))


def _audited(event: str) -> Callable[..., NoReturn]:
    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        sys.audit(event, *args)
        raise PermissionError(f"{event} is not available in the sandbox")  # the guard raised first

    return refused


def _guard_native_loading(guard: Guard) -> None:
    """Loading an extension module raises no audit event; check it before ``_imp`` loads one."""
    create_dynamic = _imp.create_dynamic

    def checked(spec: Any, *args: Any) -> Any:
        guard.check_native(spec.name, spec.origin)
        return create_dynamic(spec, *args)

    _imp.create_dynamic = checked


def _resolve(import_path: str) -> Any:
    module, _, name = import_path.partition(":")
    return getattr(importlib.import_module(module), name)


def _violation_reply(violation: SandboxViolation) -> str:
    return json.dumps({"violation": {"operation": violation.operation, "target": violation.target}})


def _error_reply(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:
        message = f"<{type(exc).__qualname__} whose message could not be read>"
    return json.dumps({"error": {"type": type(exc).__qualname__, "message": message}})


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
