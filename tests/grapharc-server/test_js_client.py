"""The JavaScript client ``@langchain/langgraph-sdk`` (npm, the version js/package-lock.json pins)
against a real ``grapharc serve``: js/client.mjs streams a chat run's tokens in ``messages-tuple``
mode, answers the credit demo's interrupt with a resume command and reads the final state; this
module runs it once against one server and checks what it printed.

The package is installed into js/node_modules (never committed) by ``npm ci``: .ci/run does it, and
so does this module where it is missing and npm is on the machine. Without node or the package the
tests skip, except where ``GRAPHARC_REQUIRE_NODE=1`` (CI), where they fail."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_graphs import CHAT, CHAT_REPLY
from required import unavailable
from server_process import PATIENCE_SECONDS, serving

from grapharc.examples.approval import GRAPH_NAME as CREDIT

JS = Path(__file__).with_name("js")
SDK = JS / "node_modules" / "@langchain" / "langgraph-sdk" / "package.json"
INSTALL_SECONDS = 300  # bound on npm ci; no test measures time with it


def _installed_as_pinned() -> bool:
    """Whether js/node_modules holds the client at the version js/package.json pins."""
    pinned = json.loads((JS / "package.json").read_text())["dependencies"]["@langchain/langgraph-sdk"]
    return SDK.exists() and json.loads(SDK.read_text())["version"] == pinned


def _missing() -> str | None:
    """Why the JavaScript client cannot run here (installing the package first if npm can), or None."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not _installed_as_pinned():
        npm = shutil.which("npm")
        if npm is None:
            return f"{SDK.parent.name} is not installed and npm is not on PATH"
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS, capture_output=True,
                              text=True, timeout=INSTALL_SECONDS)
        if done.returncode != 0:
            return f"npm ci in {JS} failed: {done.stderr.strip()[-500:]}"
    return None


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """What js/client.mjs printed, run once against one server serving client_graphs.py's graphs."""
    missing = _missing()
    if missing is not None:
        unavailable("GRAPHARC_REQUIRE_NODE", missing, f"the JavaScript client cannot run: {missing}")
    sessions = tmp_path_factory.mktemp("js-client") / "sessions"
    with serving(sessions, "--registry", "client_graphs:register") as server:
        url = server.json_announcement()["url"]
        done = subprocess.run(["node", str(JS / "client.mjs"), url, CHAT, CREDIT], capture_output=True,
                              text=True, timeout=PATIENCE_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr
    yield json.loads(done.stdout)


def test_the_js_client_answers_the_credit_desk_and_reads_the_final_state(printed: dict[str, Any]) -> None:
    credit = printed["credit"]
    assert "error" not in credit, credit
    assert credit["interrupt"]["value"].startswith("release EUR 24,000.00 to Rosalind Achterberg")
    assert credit["interrupt"]["id"]
    assert credit["status_at_interrupt"] == "interrupted"
    assert credit["final_released"] is True
    assert credit["state"]["next"] == [] and credit["state"]["released"] is True
    assert credit["state"]["notes"][-2:] == ["answer: approved",
                                             "EUR 24,000.00 released to Rosalind Achterberg"]
    assert credit["status_at_end"] == "idle"


def test_the_js_client_streams_the_chat_reply_token_by_token(printed: dict[str, Any]) -> None:
    chat = printed["chat"]
    assert "error" not in chat, chat
    assert "messages" in chat["events"]
    assert chat["text"] == CHAT_REPLY
    assert chat["node"] == "reply"
