"""``ContainerExecutor``: each tool call in a throwaway container, the real boundary.

Same ``run(tool, args, *, workspace, timeout)`` as every executor. Before any container
exists it refuses a tool with no import path (lambda, partial, bound method, closure) and
arguments that are not plain JSON; then it creates a container from the caller's image
(never pulled), attaches to its stdin, starts it, sends the call, waits at most ``timeout``
seconds, reads the runner's answer from its stdout and removes it, on every path: a timed-out
container is killed, then removed. The ``docker`` SDK is imported when the first call
connects, so listing executors costs nothing; without it the error names
``grapharc-tools[container]``.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import socket
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grapharc._missing import install_hint
from grapharc.harness.executors import ExecutorOptionError, ToolFailedError, ToolTimeoutError, call_timeout
from grapharc.harness.tools import Tool
from grapharc.tools.container.errors import (
    ContainerEngineError,
    ContainerImageMissingError,
    ContainerNoResultError,
    ContainerUnavailableError,
    NotJSONError,
    ToolNotPortableError,
)
from grapharc.tools.container.protocol import (
    NOT_JSON,
    encode_call,
    find_answer,
    json_problem,
)
from grapharc.tools.container.spec import ContainerOptions, container_config, host_config
from grapharc.tools.workspace import Workspace

if TYPE_CHECKING:
    from docker import APIClient

IMAGE_ENV = "GRAPHARC_CONTAINER_IMAGE"
LOG_TAIL_LINES = 20
OPTIONS = frozenset(field.name for field in dataclasses.fields(ContainerOptions))


def portable_path(tool: Tool) -> str:
    """The tool's ``module:name``, refused unless this process imported that very function."""
    path = tool.import_path
    if path is None:
        raise ToolNotPortableError(f"tool {tool.name!r}: its function {tool.function!r} has no import "
                                   "path (a lambda, functools.partial, bound method or closure), so "
                                   "a container cannot run it")
    module, _, name = path.partition(":")
    if module == "__main__" or getattr(sys.modules.get(module), name, None) is not tool.function:
        raise ToolNotPortableError(f"tool {tool.name!r}: {path} does not import as its function "
                                   "(a script's __main__, or a function placed under another name)")
    return path


def encode_tool_call(tool: Tool, args: Mapping[str, Any], marker: str) -> str:
    """The call a container receives, refused here if the container could not be given it."""
    kwargs = tool.arguments(args)
    if problem := json_problem(kwargs, "arguments"):
        raise NotJSONError(f"tool {tool.name!r}: {problem} cannot cross into a container")
    return encode_call(portable_path(tool), tool.name, kwargs, marker)


def send_call(attached: Any, call: str) -> None:
    """Write the call to the container's stdin and close it, so the runner reads to its end."""
    sock = getattr(attached, "_sock", attached)  # the SDK hands back a SocketIO over plain sockets
    try:
        sock.sendall(call.encode("ascii"))
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # it exited before reading: its exit code and logs will say why
    finally:
        attached.close()


def connect(base_url: str | None) -> APIClient:
    """A low-level client of the engine at ``base_url`` (``DOCKER_HOST`` etc. when None)."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        raise ContainerUnavailableError(
            "the container executor needs the docker SDK, which is not installed",
            hint=install_hint("grapharc-tools", extra="container")) from None
    try:
        client = docker.from_env() if base_url is None else docker.DockerClient(base_url=base_url)
    except DockerException as exc:
        where = base_url or "DOCKER_HOST (default unix:///var/run/docker.sock)"
        raise ContainerUnavailableError(f"no Docker engine answers at {where}: {exc}",
                                        hint="start the engine, or give the executor base_url=") from None
    return client.api


def expire(api: APIClient, container: str, expired: threading.Event) -> None:
    """Kill a container past its time (it may have just exited: removal follows either way)."""
    from docker.errors import APIError
    from requests.exceptions import ConnectionError as RequestsConnectionError

    expired.set()
    with suppress(APIError, RequestsConnectionError):
        api.kill(container)


@contextmanager
def engine_errors(image: str) -> Iterator[None]:
    """Turn the SDK's failures into GraphARC errors that say what the engine did."""
    from docker.errors import APIError, ImageNotFound
    from requests.exceptions import ConnectionError as RequestsConnectionError

    try:
        yield
    except ImageNotFound:
        raise ContainerImageMissingError(
            f"image {image!r} is not on the Docker engine, and the container executor never pulls "
            f"one", hint=f"pull or build it yourself, e.g. docker pull {image}") from None
    except APIError as exc:
        raise ContainerEngineError(f"the Docker engine refused a request: {exc.explanation or exc}",
                                   hint="check the engine's log; the executor options may not "
                                        "suit this engine") from None
    except RequestsConnectionError as exc:
        raise ContainerUnavailableError(f"lost the connection to the Docker engine: {exc}") from None


class ContainerExecutor:
    """Runs each call in a fresh container of ``image`` and removes it afterwards."""

    name = "container"

    def __init__(self, image: str, **options: Any) -> None:
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise ExecutorOptionError(f"the container executor has no option(s) {', '.join(unknown)}; "
                                      f"it takes {', '.join(sorted(OPTIONS))}")
        self.options = ContainerOptions(image=image, **options)
        self._api: APIClient | None = None

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any:
        marker = f"grapharc-answer-{secrets.token_hex(8)}"
        call = encode_tool_call(tool, args, marker)
        seconds = call_timeout(tool, timeout)
        root = Workspace(workspace).root
        api = self._client()
        with engine_errors(self.options.image):
            api.inspect_image(self.options.image)  # type: ignore[no-untyped-call]  # untyped in the stubs
            container = api.create_container(
                **container_config(self.options, tool=tool.name),
                host_config=api.create_host_config(
                    **host_config(self.options, root, needs_network=tool.needs_network)))["Id"]
            try:
                answer = self._call(api, container, tool.name, call, marker, seconds)
            finally:
                self._discard(api, container)
        return self._result(tool.name, answer)

    def _call(self, api: APIClient, container: str, tool: str, call: str, marker: str,
              seconds: float | None) -> dict[str, Any]:
        """Start the container, hand it the call, and return the runner's answer."""
        attached = api.attach_socket(container, params={"stdin": 1, "stream": 1})
        api.start(container)
        send_call(attached, call)
        exit_code = self._wait(api, container, tool, seconds)
        stdout = api.logs(container, stdout=True, stderr=False).decode("utf-8", "replace")
        answer = find_answer(stdout, marker)
        if answer is None:
            tail = api.logs(container, stdout=True, stderr=True, tail=LOG_TAIL_LINES)
            raise ContainerNoResultError(tool, exit_code, tail.decode("utf-8", "replace"))
        return answer

    def _client(self) -> APIClient:
        if self._api is None:
            self._api = connect(self.options.base_url)
        return self._api

    @staticmethod
    def _wait(api: APIClient, container: str, tool: str, seconds: float | None) -> int:
        """The container's exit code; at ``seconds`` a timer kills it and the call times out.

        The timer, not the HTTP read timeout, bounds the call: the engine sends the wait's
        headers at once and its body at exit, and the SDK's timeout is only ever a socket one.
        """
        if seconds is None:
            return int(api.wait(container)["StatusCode"])
        expired = threading.Event()
        timer = threading.Timer(seconds, expire, args=(api, container, expired))
        timer.daemon = True
        timer.start()
        try:
            status = api.wait(container)
        finally:
            timer.cancel()
        if expired.is_set():
            raise ToolTimeoutError(tool, seconds)
        return int(status["StatusCode"])

    @staticmethod
    def _discard(api: APIClient, container: str) -> None:
        from docker.errors import NotFound

        with suppress(NotFound):  # already gone
            api.remove_container(container, force=True)

    @staticmethod
    def _result(tool: str, answer: dict[str, Any]) -> Any:
        if "result" in answer:
            return answer["result"]
        if "raised" in answer:
            raise ToolFailedError(tool, answer["raised"]["type"], answer["raised"]["message"])
        refused = answer["refused"]
        if refused["code"] == NOT_JSON:
            raise NotJSONError(refused["message"])
        raise ToolNotPortableError(f"tool {tool!r}: {refused['message']}")


def create_container_executor(**options: Any) -> ContainerExecutor:
    """Factory registered under the name ``container``: ``image`` (or ``$GRAPHARC_CONTAINER_IMAGE``)
    is required, because the image is part of the security decision."""
    image = options.pop("image", None) or os.environ.get(IMAGE_ENV)
    if not image:
        raise ExecutorOptionError("the container executor needs an image to run tools in, and has no "
                                  "default", hint=f"pass image=... or set {IMAGE_ENV}, naming an image "
                                  "you built with python and grapharc-tools inside")
    return ContainerExecutor(image, **options)
