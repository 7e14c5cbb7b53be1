"""A run reclaimed after its worker died keeps what its request asked of its turn: through the
official ``langgraph-sdk``, a run with an ``interrupt_after`` breakpoint whose server is killed
mid-run is carried on by the next server, which still stops it at the breakpoint."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from api_graphs import RELAY
from langgraph_sdk import get_client, get_sync_client
from server_process import ServerProcess, grapharc_serve


def _serve(sessions: Path) -> ServerProcess:
    return ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", str(sessions),
                                        "--registry", "api_graphs:register", "--lease", "2"))


def test_a_reclaimed_run_still_stops_at_its_breakpoint(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    sessions, release = tmp_path / "sessions", tmp_path / "release"

    async def start_and_see_the_first_leg(url: str) -> tuple[str, str]:
        client = get_client(url=url)
        thread = (await client.threads.create(graph_id=RELAY))["thread_id"]
        run = await client.runs.create(thread, RELAY, input={"release_file": str(release)},
                                       interrupt_after=["middle_leg"])
        async for part in client.runs.join_stream(thread, run["run_id"], stream_mode="updates"):
            if part.event == "updates" and "first_leg" in part.data:
                return thread, run["run_id"]
        raise AssertionError("the run's stream ended before its first leg")

    with _serve(sessions) as first:
        thread, run = asyncio.run(start_and_see_the_first_leg(first.json_announcement()["url"]))
        first.send(signal.SIGKILL)  # mid-run: its middle leg waits for the release file
        first.wait()
    release.touch()
    with _serve(sessions) as second:
        client = get_sync_client(url=second.json_announcement()["url"])
        assert client.runs.join(thread, run)["legs"] == ["first", "middle"]
        assert client.runs.get(thread, run)["status"] == "interrupted"
        assert client.runs.get(thread, run)["metadata"]["grapharc"]["attempts"] == 2
        assert client.threads.get_state(thread)["next"] == ["last_leg"]
