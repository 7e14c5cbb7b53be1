"""A fake Docker Engine: enough of the Engine API, over a unix socket, for the real ``docker`` SDK.

There is no Docker engine on the test machines, so the container executor is tested against
this server instead: ``docker.DockerClient(base_url=engine.base_url)`` speaks real HTTP to it.
It records every request (method, path without the ``/v1.xx`` prefix, query, JSON body) so a
test can assert the exact container spec and that no pull was ever asked for.

It "runs" a container by executing its entrypoint and command as a local subprocess:
``python`` is mapped to the image's interpreter (this virtualenv's, which has GraphARC), the
process gets the container's environment plus the image's, and its working directory is the
host source of the bind mount whose target is the container's working directory. So results
are real; what it cannot do is enforce the confinement (user, network, capabilities,
read-only root, limits) — those are asserted on the recorded spec, and need a real engine.

Endpoints: ``GET /_ping``, ``GET /version``, ``GET /images/{name}/json``,
``POST /containers/create``, ``GET /containers/{id}/json``, ``POST /containers/{id}/attach``
(stdin only: the connection is hijacked with ``101 UPGRADED`` and everything the client sends
until it shuts its side down becomes the process's stdin), ``POST /containers/{id}/start``,
``POST /containers/{id}/wait`` (as Docker does, its 200 and headers are sent at once and
the body, chunked, when the process exits), ``GET /containers/{id}/logs`` (the multiplexed stream: an
8-byte header ``[stream, 0, 0, 0, size as big-endian uint32]`` before each frame, stdout
frames first, then stderr ones), ``POST /containers/{id}/kill`` and
``DELETE /containers/{id}``. Anything else is answered 404 and recorded.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

API_VERSION = "1.44"
VERSIONED = re.compile(r"^/v\d+\.\d+(/.*)$")


@dataclass(frozen=True)
class FakeImage:
    """An image the fake engine "has": which local interpreter ``python`` means, and its ENV."""

    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any


@dataclass
class FakeContainer:
    id: str
    spec: dict[str, Any]
    process: subprocess.Popen[bytes] | None = None
    stdout: Path | None = None
    stderr: Path | None = None
    killed: bool = False
    stdin: bytes | None = None
    stdin_sent: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class FakeDockerEngine:
    """The server; use it as a context manager, and ``base_url`` for the SDK."""

    def __init__(self, images: dict[str, FakeImage] | None = None) -> None:
        self.images = dict(images or {})
        self.requests: list[Request] = []
        self.containers: dict[str, FakeContainer] = {}
        self.removed: list[FakeContainer] = []
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix="fake-docker-"))  # short: a socket path has a limit
        self.socket = self._dir / "docker.sock"
        self.base_url = f"unix://{self.socket}"
        self._server: _Server | None = None

    def __enter__(self) -> FakeDockerEngine:
        self._server = _Server(str(self.socket), _Handler, self)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        for container in [*self.containers.values(), *self.removed]:
            if container.process is not None and container.process.poll() is None:
                container.process.kill()
                container.process.wait()
        shutil.rmtree(self._dir, ignore_errors=True)

    def calls(self, method: str, pattern: str) -> list[Request]:
        """The recorded requests of ``method`` whose path matches the regex ``pattern``."""
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    def attach(self, container_id: str, query: dict[str, str], handler: _Handler) -> bool:
        """Hijack ``handler``'s connection for a container's stdin; False if there is no such one."""
        container = self.containers.get(container_id)
        if container is None:
            return False
        with self._lock:
            self.requests.append(Request("POST", f"/containers/{container_id}/attach", query, None))
        handler.send_response(101, "UPGRADED")
        handler.send_header("Content-Type", "application/vnd.docker.raw-stream")
        handler.send_header("Connection", "Upgrade")
        handler.send_header("Upgrade", "tcp")
        handler.end_headers()
        handler.wfile.flush()
        handler.close_connection = True
        container.stdin = handler.rfile.read() if query.get("stdin") == "1" else b""
        container.stdin_sent.set()
        return True

    # ---- the endpoints; each returns (status, JSON-able body or bytes)
    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        """``(status, body)``: JSON-able, bytes, or a callable whose JSON-able result comes later."""
        with self._lock:
            self.requests.append(Request(method, path, query, body))
        if path == "/_ping":
            return 200, b"OK"
        if path == "/version":
            return 200, {"ApiVersion": API_VERSION, "MinAPIVersion": "1.24", "Version": "fake",
                         "Os": "linux", "Arch": "amd64"}
        if match := re.fullmatch(r"/images/(.+)/json", path):
            name = unquote(match.group(1))
            if name not in self.images:
                return 404, {"message": f"No such image: {name}"}
            return 200, {"Id": f"sha256:{name}", "RepoTags": [name], "Config": {"Env": []}}
        if method == "POST" and path == "/containers/create":
            return self._create(body)
        if match := re.fullmatch(r"/containers/([0-9a-f]+)(/[a-z]+)?", path):
            container = self.containers.get(match.group(1))
            if container is None:
                return 404, {"message": f"No such container: {match.group(1)}"}
            return self._container(method, match.group(2) or "", container, query)
        return 404, {"message": f"page not found: {method} {path}"}

    def _create(self, spec: dict[str, Any]) -> tuple[int, Any]:
        if spec.get("Image") not in self.images:
            return 404, {"message": f"No such image: {spec.get('Image')}"}
        container = FakeContainer(secrets.token_hex(32), spec)
        self.containers[container.id] = container
        return 201, {"Id": container.id, "Warnings": []}

    def _container(self, method: str, action: str, container: FakeContainer,
                   query: dict[str, str]) -> tuple[int, Any]:
        if method == "GET" and action == "/json":
            return 200, {"Id": container.id, "Config": {"Tty": bool(container.spec.get("Tty"))},
                         "State": {"Running": container.running}}
        if method == "POST" and action == "/start":
            if container.process is not None:
                return 304, b""
            self._start(container)
            return 204, b""
        if method == "POST" and action == "/wait":
            process = container.process
            assert process is not None, "wait on a container that was never started"
            return 200, lambda: {"StatusCode": process.wait(), "Error": None}
        if method == "GET" and action == "/logs":
            return 200, self._logs(container, query)
        if method == "POST" and action == "/kill":
            if not container.running:
                return 409, {"message": f"container {container.id} is not running"}
            container.killed = True
            assert container.process is not None
            container.process.kill()
            container.process.wait()
            return 204, b""
        if method == "DELETE" and action == "":
            if container.running:
                if query.get("force") not in ("1", "true", "True"):
                    return 409, {"message": "cannot remove a running container; stop it or force"}
                assert container.process is not None
                container.process.kill()
                container.process.wait()
            self.removed.append(self.containers.pop(container.id))
            return 204, b""
        return 404, {"message": f"page not found: {method} /containers/{{id}}{action}"}

    def _start(self, container: FakeContainer) -> None:
        spec = container.spec
        image = self.images[spec["Image"]]
        argv = [*(spec.get("Entrypoint") or []), *(spec.get("Cmd") or [])]
        if argv and argv[0] == "python":
            argv[0] = image.python
        env = dict(image.env)
        env.update(item.split("=", 1) for item in spec.get("Env") or [])
        container.stdout = self._dir / f"{container.id}.out"
        container.stderr = self._dir / f"{container.id}.err"
        cwd = self._host_path(spec, spec.get("WorkingDir") or "/")
        stdin = subprocess.PIPE if spec.get("OpenStdin") else subprocess.DEVNULL
        with container.stdout.open("wb") as out, container.stderr.open("wb") as err:
            container.process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=out, stderr=err)
        if stdin == subprocess.PIPE:
            threading.Thread(target=self._feed, args=(container,), daemon=True).start()

    @staticmethod
    def _feed(container: FakeContainer) -> None:
        """Give the process what was sent to its stdin, then close it (StdinOnce)."""
        container.stdin_sent.wait()
        assert container.process is not None and container.process.stdin is not None
        try:
            container.process.stdin.write(container.stdin or b"")
            container.process.stdin.close()
        except BrokenPipeError:
            pass  # it exited (or was killed) without reading

    @staticmethod
    def _host_path(spec: dict[str, Any], target: str) -> str:
        """The host directory a bind mount puts at ``target`` (the fake has no other filesystem)."""
        host = spec.get("HostConfig") or {}
        mounts = [(m["Source"], m["Target"]) for m in host.get("Mounts") or [] if m.get("Type") == "bind"]
        mounts += [tuple(bind.split(":")[:2]) for bind in host.get("Binds") or []]
        for source, mounted in mounts:
            if mounted == target:
                return str(source)
        raise AssertionError(f"the fake engine can only start in a bind-mounted directory, not {target}")

    @staticmethod
    def _logs(container: FakeContainer, query: dict[str, str]) -> bytes:
        streams = [(1, container.stdout)] if query.get("stdout") == "1" else []
        streams += [(2, container.stderr)] if query.get("stderr") == "1" else []
        frames = [(kind, line) for kind, path in streams if path is not None
                  for line in path.read_bytes().splitlines(keepends=True)]
        tail = query.get("tail", "all")
        if tail != "all":
            frames = frames[-int(tail):] if int(tail) else []
        return b"".join(struct.pack(">BxxxL", kind, len(line)) + line for kind, line in frames)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler], engine: FakeDockerEngine) -> None:
        super().__init__(path, handler)
        self.engine = engine


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _serve(self) -> None:
        url = urlsplit(self.path)
        path = (match.group(1) if (match := VERSIONED.match(url.path)) else url.path)
        query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        attach = re.fullmatch(r"/containers/([0-9a-f]+)/attach", path)
        if self.command == "POST" and attach and self.server.engine.attach(attach.group(1), query, self):
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw and "json" in (self.headers.get("Content-Type") or "") else None
        status, answer = self.server.engine.handle(self.command, path, query, body)
        if callable(answer):
            self._deferred(status, answer)
            return
        data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        try:
            self.send_response(status)
            content_type = "application/json" if not isinstance(answer, bytes) else (
                "application/vnd.docker.multiplexed-stream" if path.endswith("/logs") else "text/plain")
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Api-Version", API_VERSION)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a timed-out wait): nothing to answer

    def _deferred(self, status: int, answer: Callable[[], Any]) -> None:
        """Headers now, the JSON body (one chunk) when ``answer`` returns."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Api-Version", API_VERSION)
            self.end_headers()
            self.wfile.flush()
            data = json.dumps(answer()).encode()
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped waiting

    do_GET = do_POST = do_DELETE = _serve

    def address_string(self) -> str:
        return "fake-docker"

    def log_message(self, format: str, *args: Any) -> None:
        pass

