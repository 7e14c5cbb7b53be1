"""A run request's budget against a real server whose operator set a ceiling (5 node runs, 30 s):
above the ceiling it is refused naming the dimension; within it the run is held to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from api_graphs import WAITER
from test_api_http import CREDIT, _problem, _thread

APPLICATION = {"application_id": "LN-2204"}  # runs to disbursement without an approval


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60)


def _run(client: httpx.Client, thread: str, body: dict[str, Any]) -> dict[str, Any]:
    """Start a run, wait for it to end; its record."""
    started = client.post(f"/threads/{thread}/runs", json=body)
    assert started.status_code == 200, started.text
    run = started.json()["run_id"]
    client.get(f"/threads/{thread}/runs/{run}/join")
    record: dict[str, Any] = client.get(f"/threads/{thread}/runs/{run}").json()
    return record


def _nodes(client: httpx.Client, thread: str) -> list[str]:
    trace = [json.loads(line) for line in client.get(f"/threads/{thread}/trace").text.splitlines()]
    return [t["node"] for t in trace if t["kind"] == "node"]


def test_a_budget_above_the_ceiling_is_refused_naming_the_dimension(api_server_with_ceiling: str) -> None:
    with _client(api_server_with_ceiling) as client:
        thread = _thread(client)
        body = {"assistant_id": CREDIT, "input": APPLICATION,
                "budget": {"max_iterations": 6, "max_seconds": 10, "max_tokens": 10_000}}
        refused = _problem(client.post(f"/threads/{thread}/runs", json=body), 422)
        assert "max_iterations (6 > 5)" in refused["detail"]
        assert [e["loc"] for e in refused["errors"]] == [["body", "budget", "max_iterations"]]
        for bad in ({"max_tokens": 0}, {"max_tokens": "many"}, {"max_seconds": -1}, {"max_widgets": 1}):
            _problem(client.post(f"/threads/{thread}/runs", json={**body, "budget": bad}), 422)
        assert client.get(f"/threads/{thread}").json()["metadata"]["grapharc_status"] == "created"
        assert _nodes(client, thread) == []


def test_a_run_is_held_to_its_budget_and_to_the_ceiling(api_server_with_ceiling: str) -> None:
    with _client(api_server_with_ceiling) as client:
        tight = _thread(client)
        body = {"assistant_id": CREDIT, "input": APPLICATION, "budget": {"max_iterations": 2}}
        run = _run(client, tight, body)
        assert run["status"] == "error"
        assert "iterations budget exceeded" in run["metadata"]["error"]
        assert len(_nodes(client, tight)) == 2
        assert client.get(f"/threads/{tight}").json()["metadata"]["grapharc_status"] == "failed"

        capped = _thread(client)
        run = _run(client, capped, {"assistant_id": CREDIT, "input": APPLICATION})
        assert run["status"] == "error" and "limit of 5" in run["metadata"]["error"]
        assert len(_nodes(client, capped)) == 5


def test_a_run_is_stopped_at_its_seconds(api_server_with_ceiling: str, tmp_path: Path) -> None:
    release = tmp_path / "release"  # never made: only the budget can end the run
    with _client(api_server_with_ceiling) as client:
        thread = _thread(client, WAITER)
        run = _run(client, thread, {"assistant_id": WAITER, "input": {"release_file": str(release)},
                                    "budget": {"max_seconds": 1}})
        assert run["status"] == "error"
        assert "seconds budget exceeded" in run["metadata"]["error"]
        assert _nodes(client, thread) == []


def test_the_ceiling_and_the_session_store_come_from_the_config_layers_as_every_commands_do(
        tmp_path: Path, monkeypatch: Any) -> None:
    from server_process import ServerProcess, grapharc_serve

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    monkeypatch.setenv("GRAPHARC_MAX_SECONDS", "30")
    config = tmp_path / "served.toml"
    config.write_text('[grapharc]\nmax_iterations = 5\nsessions = "kept"\n')
    command = grapharc_serve("--port", "0", "--json", "--config", str(config),
                             "--registry", "api_graphs:register")
    with ServerProcess(command) as server:
        announced = server.json_announcement()
        client = _client(announced["url"])
        assert announced["sessions"] == str(tmp_path / "kept")
        assert {name: announced["sources"][name] for name in ("sessions", "max_iterations", "max_seconds")} \
            == {"sessions": "file", "max_iterations": "file", "max_seconds": "env"}
        thread = _thread(client)
        body = {"assistant_id": CREDIT, "input": APPLICATION, "budget": {"max_iterations": 6}}
        refused = _problem(client.post(f"/threads/{thread}/runs", json=body), 422)
        assert "max_iterations (6 > 5)" in refused["detail"]
        assert (tmp_path / "kept" / "sessions.db").is_file()
        client.close()
