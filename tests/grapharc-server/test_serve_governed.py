"""``grapharc serve --policy``: the governed loop as the ``governed`` assistant of a real server.

The incident demo's scripted planner proposes triage -> deploy first and triage -> patch ->
verify second; the policy decides what becomes of the first proposal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_process import ServerProcess, grapharc_serve

from grapharc.cli.main import run
from grapharc.errors import ConfigurationError
from grapharc.server.governed import GOVERNED, resolve_governed

ALLOW_THE_REST = ('[[rules]]\nid = "edges"\nresource = "edge"\naction = "allow"\n'
                  '[[rules]]\nid = "kinds"\nresource = "node"\naction = "allow"\n')
DENY_DEPLOYS = ('version = "deny-1"\ndescription = "no deploys"\n[[rules]]\nid = "no-deploys"\n'
                'resource = "edge"\naction = "deny"\ntarget = "deploy"\n'
                'reason = "deploying needs a change window"\n' + ALLOW_THE_REST)
ASK_FOR_DEPLOYS = ('version = "ask-1"\n[[rules]]\nid = "deploys-need-a-person"\nresource = "node"\n'
                   'action = "ask"\nkind = "deploy"\nreason = "a deploy cannot be undone"\n'
                   + ALLOW_THE_REST)


def _policy(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _serve(tmp_path: Path, *options: str) -> Iterator[tuple[ServerProcess, dict[str, Any]]]:
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"), *options)
    with ServerProcess(command) as server:
        yield server, server.json_announcement()


def _start(client: httpx.Client, thread: str) -> httpx.Response:
    created = client.post("/threads", json={"thread_id": thread, "metadata": {"graph_id": GOVERNED}})
    assert created.status_code == 200, created.text
    return client.post(f"/threads/{thread}/runs/wait",
                       json={"assistant_id": GOVERNED, "input": {"goal": "fix the checkout outage"}})


def test_a_denied_first_proposal_is_replanned_and_the_audit_names_the_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "governed.jsonl"
    monkeypatch.setenv("GRAPHARC_TRACE", str(trace))
    policy = _policy(tmp_path, DENY_DEPLOYS)
    for _server, announced in _serve(tmp_path, "--policy", str(policy)):
        governed = announced["governed"]
        assert (governed["assistant_id"], governed["policy_source"]) == (GOVERNED, "flag")
        assert governed["policy"]["origin"] == str(policy) and governed["sources"]["trace"] == "env"
        with httpx.Client(base_url=announced["url"], timeout=60) as client:
            done = _start(client, "outage-1")
            assert done.status_code == 200, done.text
            thread = client.get("/threads/outage-1").json()

    values = done.json()
    assert thread["status"] == "idle" and values["stop"] == "goal_met"
    first, second = values["rounds"]
    assert (first["admission"]["status"], first["executed"]) == ("rejected", False)
    assert [(r["code"], r["rule_id"]) for r in first["admission"]["rejections"]] == \
        [("edge_denied", "no-deploys")]
    denied = [a for a in first["admission"]["audit"] if a["decision"] == "deny"]
    assert [(a["subject"], a["rule_id"], a["policy_version"]) for a in denied] == \
        [("triage -> deploy", "no-deploys", "deny-1")]
    assert (second["admission"]["status"], second["executed"]) == ("admitted", True)
    assert values["domain"] == {"goal": "fix the checkout outage",
                                "notes": ["triage ran", "patch ran", "verify ran"]}
    decisions = [json.loads(line) for line in trace.read_text().splitlines()
                 if json.loads(line).get("action") == "decision"]
    assert [d["failed"] for d in decisions] == [["edge_denied"], []]
    assert decisions[0]["rejections"][0]["rule_id"] == "no-deploys"


def test_an_ask_pauses_the_thread_on_an_approval_the_inbox_lists_and_a_resume_run_decides(
        tmp_path: Path) -> None:
    from inbox_setup import TOKEN, signed_in, write_auth_file

    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{GOVERNED}/*")
    policy = _policy(tmp_path, ASK_FOR_DEPLOYS)
    for _server, announced in _serve(tmp_path, "--policy", str(policy), "--auth-file", str(auth)):
        url = announced["url"]
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
            paused = _start(api, "release-1")
            assert paused.status_code == 200, paused.text
            (asked,) = paused.json()["__interrupt__"]
            assert "deploys-need-a-person" in asked["value"] and "deploy" in asked["value"]
            assert paused.json()["rounds"] == []  # nothing of the proposal ran before the answer

            listed = api.get("/inbox/pending.json").json()["approvals"]
            assert [(a["graph"], a["node"]) for a in listed] == [(GOVERNED, "round")]
            with signed_in(url, "alice") as person:
                assert listed[0]["approval_id"] in person.get("/inbox").text

            done = api.post("/threads/release-1/runs/wait",
                            json={"assistant_id": GOVERNED, "command": {"resume": "approved"}})
            assert done.status_code == 200, done.text
            decided = api.get("/threads/release-1/trace").text

    values = done.json()
    assert values["stop"] == "goal_met" and "__interrupt__" not in values
    first = values["rounds"][0]
    assert (first["admission"]["status"], first["executed"]) == ("admitted", True)
    assert values["domain"]["notes"][:2] == ["triage ran", "deploy ran"]
    entries = [json.loads(line) for line in decided.splitlines()]
    assert [(e["detail"]["decision"], e["detail"]["by"]) for e in entries
            if e["kind"] == "decided"] == [("approved", "alice")]


def test_a_person_rejecting_the_ask_on_the_inbox_page_stops_the_loop(tmp_path: Path) -> None:
    from inbox_setup import TOKEN, csrf_of, signed_in, write_auth_file

    auth = write_auth_file(tmp_path / "auth.toml", alice_may_decide=f"{GOVERNED}/*")
    policy = _policy(tmp_path, ASK_FOR_DEPLOYS)
    for _server, announced in _serve(tmp_path, "--policy", str(policy), "--auth-file", str(auth)):
        url = announced["url"]
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
            (asked,) = _start(api, "release-2").json()["__interrupt__"]
            with signed_in(url, "alice") as person:
                page = person.get(f"/inbox/approvals/{asked['id']}")
                assert "deploys-need-a-person" in page.text
                answer = person.post(f"/inbox/approvals/{asked['id']}",
                                     data={"decision": "rejected", "csrf": csrf_of(page)})
                assert answer.status_code == 303, answer.text
            carrying = api.get("/threads/release-2/runs", params={"limit": 1}).json()[0]
            api.get(f"/threads/release-2/runs/{carrying['run_id']}/join")  # the worker carries it on
            values = api.get("/threads/release-2/state").json()["values"]
            status = api.get("/threads/release-2").json()["metadata"]["grapharc_status"]

    assert (status, values["stop"]) == ("completed", "approval_declined")
    assert values["rounds"][0]["admission"]["rejections"][0]["code"] == "node_approval_declined"
    assert "deploy ran" not in values["domain"]["notes"]


@pytest.mark.parametrize(("content", "problem"), [
    (None, "does not exist"),
    (b"\x00\x01binary\xff", "is binary data, not TOML"),
    (b"rules = [", "is not valid TOML"),
    (b'version = "x"\ncolour = "red"\n' + ALLOW_THE_REST.encode(), "colour: Extra inputs are not permitted"),
])
def test_a_bad_policy_file_stops_serve_before_it_binds(tmp_path: Path, content: bytes | None, problem: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.toml"
    if content is not None:
        policy.write_bytes(content)
    # off loopback without --auth-file, serve refuses once it has bound: a policy error must come first
    code = run(["serve", "--host", "0.0.0.0", "--port", "0", "--json", "--sessions", str(tmp_path / "s"),
                "--policy", str(policy)])
    out, err = capsys.readouterr()
    assert code == 2
    error = json.loads(out)["error"]
    assert "policy.toml" in error["message"] and problem in error["message"]
    assert "\n" not in error["message"] and "Traceback" not in err


def test_the_policy_comes_from_the_config_layers_and_none_means_no_governed_assistant(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHARC_POLICY", raising=False)
    assert resolve_governed({}, None) is None
    with pytest.raises(ConfigurationError, match="--kinds, --model configure the governed assistant"):
        resolve_governed({"registry": "plugins", "model": "mock/x"}, None)

    _policy(tmp_path, DENY_DEPLOYS)
    (tmp_path / "grapharc.toml").write_text('[grapharc]\npolicy = "policy.toml"\n', encoding="utf-8")
    from_file = resolve_governed({}, None)
    assert from_file is not None and from_file.policy.source == "config"

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("GRAPHARC_POLICY", str(_policy(tmp_path / "elsewhere", ASK_FOR_DEPLOYS)))
    from_env = resolve_governed({}, None)
    assert from_env is not None and (from_env.policy.source, from_env.engine.version) == ("env", "ask-1")
