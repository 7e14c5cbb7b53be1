"""Text UTF-8 cannot carry (a lone surrogate, which JSON may escape) is refused before anything stores
it, and a problem document quoting one is still a JSON document."""

from __future__ import annotations

import json

import httpx

RELAY = "relay"


def test_a_lone_surrogate_anywhere_in_a_body_is_refused_before_it_is_stored(api_server: str) -> None:
    """A run's metadata holding one was stored, and every later listing of the thread's runs then
    failed with a 500 (its JSON could not be encoded as UTF-8)."""
    with httpx.Client(base_url=api_server, timeout=30) as client:
        thread = client.post("/threads", json={"metadata": {"graph_id": RELAY}}).json()["thread_id"]
        for body in (b'{"assistant_id": "relay", "input": {}, "metadata": {"note": "\\ud800"}}',
                     b'{"assistant_id": "relay", "input": {}, "metadata": {"\\udfff": 1}}',
                     b'{"assistant_id": "relay", "input": {}, "metadata": {"deep": [["ok \\ud83d"]]}}'):
            refused = client.post(f"/threads/{thread}/runs", content=body,
                                  headers={"content-type": "application/json"})
            assert refused.status_code == 422, refused.text
            assert "lone surrogate" in refused.json()["detail"]
        paired = client.post(f"/threads/{thread}/runs/wait", content=(
            b'{"assistant_id": "relay", "input": {}, "metadata": {"note": "\\ud83d\\ude00 fine"}}'),
            headers={"content-type": "application/json"})
        assert paired.status_code == 200, paired.text
        listed = client.get(f"/threads/{thread}/runs")
        assert listed.status_code == 200, listed.text
        assert [r["metadata"]["note"] for r in listed.json()] == ["\U0001f600 fine"]


def test_a_problem_quoting_a_lone_surrogate_is_still_a_json_document() -> None:
    from grapharc.server.api.problems import problem

    rendered = problem(404, "no session has thread id '\ud800'", hint="\udfff").body
    assert rendered.isascii()
    assert json.loads(rendered)["detail"] == "no session has thread id '\ud800'"
