"""LangGraph's own API server (``langgraph dev``) serving the same graphs as a ``grapharc serve``.

``grapharc serve`` takes a registry (``module:function`` that registers GraphARC builders on a
SessionManager); ``langgraph dev`` takes a langgraph.json naming compiled LangGraph graphs. A
compiled GraphARC graph refuses to run outside a GraphARC run (``MissingRunContextError``: its
nodes need the run's budget meter and trace), so ``langgraph dev`` serves each graph's plain twin:
a LangGraph ``StateGraph`` over the same state model with the same node functions, edges and
routers, without GraphARC's governance (declared writes, budgets, trace, approvals).

``langgraph dev`` runs from a virtualenv of its own (``ENV_DIR``, created on first use with
``langgraph-cli[inmem]`` at ``CLI_VERSION`` and this checkout's grapharc-core, which the twins import),
so its dependencies never touch the workspace's. Used by sdk_differential.py and server_load.py.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
ENV_DIR = Path(os.environ.get("GRAPHARC_LANGGRAPH_DEV_ENV",
                              Path.home() / ".cache" / "grapharc-langgraph-dev"))
CLI_VERSION = "0.4.40"
REQUIREMENTS = [f"langgraph-cli[inmem]=={CLI_VERSION}", "-e", str(ROOT / "grapharc-core")]
PATIENCE_SECONDS = 120.0
"""Bound on installing the environment's packages and on a server becoming healthy."""


class LangGraphDevUnavailable(RuntimeError):
    """``langgraph dev`` cannot be installed or started here (no package registry, say)."""


def ensure_env() -> Path:
    """The ``langgraph`` command of ``ENV_DIR``, creating the virtualenv and installing
    ``REQUIREMENTS`` where they are not what its marker file says was installed."""
    marker = ENV_DIR / "grapharc-requirements.txt"
    langgraph = ENV_DIR / "bin" / "langgraph"
    wanted = "\n".join(REQUIREMENTS)
    if langgraph.exists() and marker.exists() and marker.read_text() == wanted:
        return langgraph
    uv = shutil.which("uv", path=str(ROOT / ".tools" / "bin")) or shutil.which("uv")
    python = str(ENV_DIR / "bin" / "python")
    if uv is not None:
        steps = [[uv, "venv", "--quiet", "--allow-existing", "--python", sys.executable, str(ENV_DIR)],
                 [uv, "pip", "install", "--quiet", "--python", python, *REQUIREMENTS]]
    else:
        steps = [[sys.executable, "-m", "venv", str(ENV_DIR)],
                 [str(ENV_DIR / "bin" / "pip"), "install", "--quiet", *REQUIREMENTS]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=PATIENCE_SECONDS * 5)
        if done.returncode != 0:
            raise LangGraphDevUnavailable(f"{' '.join(step[:3])} failed: {done.stderr.strip()[-800:]}")
    marker.write_text(wanted)
    return langgraph


class _Collector:
    """Stands in for a SessionManager: keeps the builders a registry function registers."""

    def __init__(self) -> None:
        self.graphs: dict[str, Any] = {}

    def register(self, graph: Any, **_governance: Any) -> None:
        self.graphs[graph.name] = graph


def registered(registry: str) -> dict[str, Any]:
    """The GraphARC builders ``registry`` (``module:function``) registers, by graph name."""
    module, _, function = registry.partition(":")
    collector = _Collector()
    getattr(importlib.import_module(module), function)(collector)
    return collector.graphs


def plain_twin(graph: Any) -> Any:
    """The GraphARC builder ``graph`` as a compiled plain LangGraph graph: the same state, node
    functions, edges, joins and routers, with none of GraphARC's wrappers."""
    from langgraph.graph import StateGraph

    if graph.fanouts:
        raise ValueError(f"graph {graph.name!r}: fan-outs have no plain twin")
    builder = StateGraph(graph.state)
    for name, node in graph.nodes.items():
        options = {key: value for key, value in node.options.items() if value is not None}
        builder.add_node(name, node.fn, **options)
    for source, target in graph.edges:
        builder.add_edge(source, target)
    for sources, target in graph.joins:
        builder.add_edge(list(sources), target)
    for route in graph.routes:
        builder.add_conditional_edges(route.source, route.router, route.path_map)
    return builder.compile(name=graph.name)


def twins(registry: str) -> dict[str, Any]:
    """Every graph ``registry`` registers, as its plain twin, by graph name."""
    return {name: plain_twin(graph) for name, graph in registered(registry).items()}


def write_app(work: Path, registry: str) -> Path:
    """A langgraph.json (and the module it points at) in ``work`` serving the twins of
    ``registry``'s graphs under their GraphARC names; its path."""
    names = sorted(registered(registry))
    lines = ['"""Written by benchmarks/langgraph_dev.py: the plain twins langgraph dev serves."""',
             "from langgraph_dev import twins", "", f"_TWINS = twins({registry!r})"]
    lines += [f"graph_{index} = _TWINS[{name!r}]" for index, name in enumerate(names)]
    (work / "langgraph_twins_app.py").write_text("\n".join(lines) + "\n")
    graphs = {name: f"./langgraph_twins_app.py:graph_{index}" for index, name in enumerate(names)}
    config = work / "langgraph.json"
    config.write_text(json.dumps({"dependencies": ["."], "graphs": graphs}))
    return config


def cached_bytecode(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without ``PYTHONDONTWRITEBYTECODE``, for a server the benchmarks launch: with it
    set, every launch compiles every module it imports again (start-up timed twice as long here,
    on both servers), where an installed server has its bytecode cached by its first start."""
    return {name: value for name, value in environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on now."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen[Any], began: float,
                 patience: float = PATIENCE_SECONDS) -> float:
    """Seconds from ``began`` (a ``time.monotonic()``) until ``url`` answers 200, polling every
    10 ms; ``LangGraphDevUnavailable`` if the process exits or ``patience`` seconds pass first. One
    client polls: ``httpx.get`` makes a client (and loads the CA bundle) per call, about 30 ms of
    CPU each, so polling that way every 10 ms kept most of a core busy while the server it timed
    started."""
    with httpx.Client(timeout=1.0) as client:
        while time.monotonic() - began < patience:
            if process.poll() is not None:
                raise LangGraphDevUnavailable(f"the server exited ({process.returncode}) before {url} "
                                              "answered")
            try:
                if client.get(url).status_code == 200:
                    return time.monotonic() - began
            except httpx.TransportError:
                pass
            time.sleep(0.01)
    raise LangGraphDevUnavailable(f"{url} did not answer within {patience:g} s")


@dataclass
class Served:
    """A running server: its URL, its process id and how long it took to answer its health check."""

    url: str
    pid: int
    healthy_after_s: float


@contextmanager
def langgraph_dev(work: Path, registry: str, search_path: list[Path],
                  env: dict[str, str] | None = None, wrapper: Sequence[str] = (),
                  patience: float = PATIENCE_SECONDS) -> Iterator[Served]:
    """``langgraph dev`` on 127.0.0.1 serving the twins of ``registry`` (importable from
    ``search_path``), its app files written to ``work``, run by ``wrapper`` when given (``valgrind
    ...``: the command comes after it), healthy within ``patience`` seconds; stopped (SIGTERM, then
    SIGKILL) on exit."""
    langgraph = ensure_env()
    sys.path[:0] = [str(path) for path in search_path if str(path) not in sys.path]
    config = write_app(work, registry)
    port = free_port()
    python_path = os.pathsep.join([str(Path(__file__).parent), *map(str, search_path)])
    environment = {**cached_bytecode(os.environ), **(env or {}), "PYTHONPATH": python_path,
                   "LANGGRAPH_CLI_NO_ANALYTICS": "1",
                   "LANGSMITH_TRACING": "false"}
    command = [*wrapper, str(langgraph), "dev", "--config", str(config), "--host", "127.0.0.1",
               "--port", str(port), "--no-browser", "--no-reload", "--allow-blocking"]
    began = time.monotonic()
    with (work / "langgraph-dev.log").open("w") as log:
        process = subprocess.Popen(command, cwd=work, env=environment, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        yield Served(url, process.pid, wait_healthy(f"{url}/ok", process, began, patience))
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
