"""A registered graph served by ``grapharc serve`` and driven by the official ``langgraph-sdk``.

This file is both sides. Imported by the server (``--registry served_graph_sdk:register``), it
registers the ``triage`` graph on the server's session manager. Run as a script, it starts
``grapharc serve`` as a second process on 127.0.0.1 (port 0: the server picks a free one and
announces its URL as JSON), then uses ``langgraph_sdk`` to create a thread, stream a run and
read the thread's state back, and stops the server.

Run it from the repository root after ``make install`` (needs grapharc-server):

    .venv/bin/python examples/served_graph_sdk.py
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, cast

from langgraph_sdk import get_client

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.runtime.graph import END, START
from grapharc.session.manager import SessionManager


class Ticket(GraphARCState):
    """The served graph's state."""

    text: str
    label: str = ""


def label(ticket: Ticket) -> dict[str, str]:
    """Label the ticket (the graph's one node, declared to write ``label``)."""
    return {"label": "outage" if "down" in ticket.text else "question"}


def register(manager: SessionManager) -> None:
    """The server's registry: the ``triage`` graph becomes an assistant of that id."""
    graph = GraphARC(Ticket, name="triage", budget=Budget(max_iterations=3))
    graph.add_node("label", label, writes={"label"})
    graph.add_edge(START, "label")
    graph.add_edge("label", END)
    manager.register(graph)


def start_server(sessions: Path) -> tuple[subprocess.Popen[str], str]:
    """``grapharc serve`` in a process of its own, and the URL its JSON announcement names."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "grapharc.cli", "serve", "--host", "127.0.0.1",
                               "--port", "0", "--sessions", str(sessions),
                               "--registry", "served_graph_sdk:register", "--json"],
                              stdout=subprocess.PIPE, text=True, env=env)
    stdout = cast(IO[str], server.stdout)  # a pipe: Popen was given stdout=PIPE
    announcement = ""
    while line := stdout.readline():  # the announcement spans several lines
        announcement += line
        try:
            return server, str(json.loads(announcement)["url"])
        except json.JSONDecodeError:
            continue
    raise SystemExit(f"grapharc serve exited ({server.wait()}) before it announced its URL")


async def drive(url: str) -> None:
    """Create a thread, stream a run of ``triage`` on it, then read its state back."""
    client = get_client(url=url)
    thread = await client.threads.create(graph_id="triage")
    print("thread:", thread["thread_id"])
    async for part in client.runs.stream(thread["thread_id"], "triage",
                                         input={"text": "checkout is down"}, stream_mode="updates"):
        if part.event == "updates":
            print("update:", part.data)
    state: Any = await client.threads.get_state(thread["thread_id"])
    print("state:", state["values"])
    print("thread status:", (await client.threads.get(thread["thread_id"]))["status"])


def main(folder: Path) -> None:
    """Serve the graph from a fresh sessions folder, drive it, then stop the server."""
    server, url = start_server(folder / "sessions")
    try:
        print("serving at", url)
        asyncio.run(drive(url))
    finally:
        server.terminate()
        print("server stopped, exit code", server.wait())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="grapharc-served-example-") as scratch:
        main(Path(scratch))
