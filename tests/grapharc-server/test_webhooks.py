"""Run webhooks against a real ``grapharc serve`` and a real receiver on 127.0.0.1: one POST of the
run's record per run end (success, error, interrupted, cancelled), from every run-starting route
the SDK calls; signed with HMAC-SHA256 when the server has a secret, unsigned (and said so at
start) without; 5xx and timeouts retried, 4xx not; a URL outside the egress rule, or not http(s),
refused with 422 before anything is queued; a hook pending when the server is SIGKILLed arrives
once after a restart, and a delivered one is never sent again."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from server_process import ServerProcess
from webhook_receiver import HANG, Receiver, receiving, wait_until
from webhook_stories import (
    FAILING,
    HOOK_OPTIONS,
    a_hook_pending_at_a_kill_arrives_once_after_restart,
    a_marker_arrives,
    beside,
    create_run,
    hook_server,
)

from grapharc.runs.records import RunRecord
from grapharc.server.api.webhooks import open_webhooks
from grapharc.server.webhooks.settings import WebhookSettings
from grapharc.stores import open_store
from grapharc.testing.thread_trips import thread_trips
from grapharc.webhooks.records import DELIVERED, FAILED, PENDING, Delivery

SECRET = "a-long-random-secret-for-the-hooks"
SECRET_ENV = "GRAPHARC_TEST_HOOK_SECRET"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with receiving() as listening:
        yield listening


@pytest.fixture(scope="module")
def signed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The URL and sessions of a server signing hooks with ``SECRET`` (``--webhook-secret-env``)."""
    with pytest.MonkeyPatch.context() as patch:
        beside(patch)
        patch.setenv(SECRET_ENV, SECRET)
        sessions = tmp_path_factory.mktemp("hooks") / "sessions"
        with hook_server(str(sessions), "--webhook-secret-env", SECRET_ENV) as server:
            yield server.json_announcement()["url"], sessions


@pytest.fixture
def signed(signed_server: tuple[str, Path]) -> str:
    return signed_server[0]


def delivery_once_settled(sessions: Path, run_id: str) -> Delivery:
    """The run's delivery as its store keeps it, once it is no longer pending."""
    store = open_store(f"sqlite:{sessions}", kind="webhooks")
    try:
        return wait_until(lambda: (found := store.get(run_id)) is not None and found.status != PENDING
                          and found, f"the delivery of run {run_id} to settle")
    finally:
        store.close()


def run_record(url: str, thread_id: str, run_id: str) -> dict[str, Any]:
    return httpx.get(f"{url}/threads/{thread_id}/runs/{run_id}", timeout=30).json()


def test_each_end_of_a_run_posts_its_record_once(signed: str, receiver: Receiver, tmp_path: Path) -> None:
    async def story() -> dict[str, dict[str, Any]]:
        client = get_client(url=signed)
        ends: dict[str, dict[str, Any]] = {}
        for path, graph, values in (("/success", FAILING, {"fail": False}),
                                    ("/error", FAILING, {"fail": True}),
                                    ("/paused", "credit-approval", {"application_id": "LN-7310"})):
            thread = (await client.threads.create(graph_id=graph))["thread_id"]
            ends[path] = dict(await client.runs.create(thread, graph, input=values,
                                                       webhook=receiver.url(path)))
            await client.runs.join(thread, ends[path]["run_id"])
        thread = (await client.threads.create(graph_id="waiter"))["thread_id"]
        release = tmp_path / "release"
        ends["/cancelled"] = dict(await client.runs.create(
            thread, "waiter", input={"release_file": str(release)}, webhook=receiver.url("/cancelled")))
        await client.runs.cancel(thread, ends["/cancelled"]["run_id"], wait=True)
        release.touch()
        return ends

    ends = asyncio.run(story())
    statuses = {}
    for path, created in ends.items():
        hook = receiver.wait_for(path)[0]
        assert hook.json() == run_record(signed, created["thread_id"], created["run_id"])
        statuses[path] = hook.json()["status"]
    assert statuses == {"/success": "success", "/error": "error", "/paused": "interrupted",
                        "/cancelled": "interrupted"}
    a_marker_arrives(signed, receiver, "/after-the-ends")
    assert [len(receiver.at(path)) for path in ends] == [1, 1, 1, 1]


POLL_HOURLY = "import grapharc.server.webhooks.sender as s; s.POLL_SECONDS = 3600.0"
"""The sender looks unwoken only once an hour: a hook then arrives only if a run's end wakes it."""


def test_a_run_ending_here_wakes_the_sender_without_waiting_for_its_poll(
        receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    command = [sys.executable, "-c", f"import sys; {POLL_HOURLY}; from grapharc.cli.main import run; "
               "sys.exit(run(sys.argv[1:]))", "serve", "--port", "0", "--json", "--sessions",
               str(tmp_path / "sessions"), "--registry", "api_graphs:register", *HOOK_OPTIONS]
    with ServerProcess(command) as server:
        created = create_run(server.json_announcement()["url"], receiver.url("/woken"))
        [hook] = receiver.wait_for("/woken")
    assert hook.json()["run_id"] == created["run_id"]


def test_only_a_run_with_a_webhook_wakes_the_sender_as_it_ends(tmp_path: Path) -> None:
    """A run records whether it has a webhook, so the end of one without costs the sender no look
    (a read of the webhook store); the end of one with a hook wakes it."""
    sessions = tmp_path / "sessions"
    runs = open_store(f"sqlite:{sessions}", kind="runs")
    webhooks = open_webhooks(sessions, runs, WebhookSettings(), "w", time.time, kept=True)
    assert webhooks.sender is not None
    woken: list[bool] = []
    webhooks.sender.wake = lambda: woken.append(True)  # type: ignore[method-assign]
    try:
        now = time.time()
        plain = webhooks.add_run(RunRecord("plain", "t1", FAILING, {}, now, now), None, exclusive=True)
        hooked = webhooks.add_run(RunRecord("hooked", "t2", FAILING, {}, now, now), "http://127.0.0.1:9/hook",
                                  exclusive=True)
        assert (runs.get("t1", plain.run_id).webhook, runs.get("t2", hooked.run_id).webhook) == (False, True)
        webhooks.run_ended(runs.get("t1", plain.run_id))
        assert woken == []
        webhooks.run_ended(runs.get("t2", hooked.run_id))
        assert woken == [True]
    finally:
        asyncio.run(webhooks.aclose())
        runs.close()


def test_a_look_with_nothing_due_takes_no_trip_to_a_thread_on_sqlite(tmp_path: Path) -> None:
    """The sender's look, at each run end with a hook and each poll, reads SQLite on the event loop
    (a WAL file's readers never wait): with nothing due it makes no trip to the store pool."""
    sessions = tmp_path / "sessions"
    runs = open_store(f"sqlite:{sessions}", kind="runs")
    webhooks = open_webhooks(sessions, runs, WebhookSettings(), "w", time.time, kept=True)
    sender, store = webhooks.sender, webhooks.store
    assert sender is not None and store is not None
    looks: list[bool] = []
    has_due = store.has_due

    def counted(now: float) -> bool:
        looks.append(True)
        return has_due(now)

    store.has_due = counted  # type: ignore[method-assign]

    async def idle_looks() -> list[str]:
        with thread_trips() as trips:
            sender.start()
            for woken in range(3):
                while len(looks) <= woken:
                    await asyncio.sleep(0.01)
                sender.wake()
            while len(looks) < 4:
                await asyncio.sleep(0.01)
        await webhooks.aclose()
        return trips.names()

    try:
        assert asyncio.run(asyncio.wait_for(idle_looks(), timeout=60)) == []
        assert len(looks) >= 4
    finally:
        runs.close()


def test_every_run_starting_route_takes_a_webhook(signed: str, receiver: Receiver) -> None:
    async def story() -> list[str]:
        client = get_client(url=signed)
        thread = (await client.threads.create(graph_id=FAILING))["thread_id"]
        await client.runs.wait(thread, FAILING, input={"fail": False}, webhook=receiver.url("/thread-wait"))
        async for _ in client.runs.stream(thread, FAILING, input={"fail": False},
                                          webhook=receiver.url("/thread-stream")):
            pass
        await client.runs.wait(None, FAILING, input={"fail": False}, webhook=receiver.url("/stateless-wait"))
        async for _ in client.runs.stream(None, FAILING, input={"fail": False},
                                          webhook=receiver.url("/stateless-stream")):
            pass
        created = await client.runs.create(None, FAILING, input={"fail": False},
                                           webhook=receiver.url("/stateless-create"))
        return [thread, created["thread_id"]]

    threads = asyncio.run(story())
    for path in ("/thread-wait", "/thread-stream", "/stateless-wait", "/stateless-stream",
                 "/stateless-create"):
        hook = receiver.wait_for(path)[0].json()
        assert hook["status"] == "success" and hook["kwargs"]["webhook"] == receiver.url(path)
    assert receiver.at("/stateless-create")[0].json()["thread_id"] == threads[1]


def test_the_signature_verifies_with_the_secret(signed: str, receiver: Receiver) -> None:
    run = create_run(signed, receiver.url("/signed"))
    hook = receiver.wait_for("/signed")[0]
    timestamp = hook.headers["X-GraphARC-Timestamp"]
    expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + hook.body, hashlib.sha256).hexdigest()
    assert hook.headers["X-GraphARC-Signature"] == f"sha256={expected}"
    assert hook.headers["X-GraphARC-Delivery"] == run["run_id"]
    forged = hmac.new(b"another secret", f"{timestamp}.".encode() + hook.body, hashlib.sha256).hexdigest()
    assert hook.headers["X-GraphARC-Signature"] != f"sha256={forged}"


def test_a_500_is_retried_until_the_receiver_takes_it(signed: str, receiver: Receiver) -> None:
    receiver.answer("/flaky", 500, 503)
    run = create_run(signed, receiver.url("/flaky"))
    hits = receiver.wait_for("/flaky", answered=200)
    assert [hit.answered for hit in receiver.at("/flaky")] == [500, 503, 200]
    assert len({hit.body for hit in receiver.at("/flaky")}) == 1 and hits[0].json()["run_id"] == run["run_id"]


def test_a_400_is_not_retried(signed_server: tuple[str, Path], receiver: Receiver) -> None:
    url, sessions = signed_server
    receiver.answer("/refusing", then=400)
    run = create_run(url, receiver.url("/refusing"))
    delivery = delivery_once_settled(sessions, run["run_id"])
    assert (delivery.status, delivery.attempts) == (FAILED, 1)
    assert delivery.last_error == "the receiver answered 400 Bad Request (attempt 1)"
    assert [hit.answered for hit in receiver.at("/refusing")] == [400]


def test_a_delivered_hook_is_recorded_delivered(signed_server: tuple[str, Path], receiver: Receiver) -> None:
    url, sessions = signed_server
    run = create_run(url, receiver.url("/recorded"))
    delivery = delivery_once_settled(sessions, run["run_id"])
    assert (delivery.status, delivery.attempts, delivery.last_error) == (DELIVERED, 1, None)
    assert json.loads(delivery.body or "") == receiver.at("/recorded")[0].json()


def test_an_attempt_that_times_out_is_retried(signed: str, receiver: Receiver) -> None:
    receiver.answer("/slow", HANG)
    create_run(signed, receiver.url("/slow"))
    receiver.wait_for("/slow", answered=200)
    assert [hit.answered for hit in receiver.at("/slow")] == [0, 200]  # 0: it never answered the first


@pytest.mark.parametrize(("webhook", "says"), [
    ("http://10.20.30.40/hook", "refused by the egress rule: 10.20.30.40 resolves to 10.20.30.40, outside "
                                "the addresses webhooks may reach (loopback addresses only, the default)"),
    ("http://hooker:pa55word@192.0.2.7:8080/hook",
     "webhook http://hooker:***@192.0.2.7:8080/hook is refused"),
    ("ftp://127.0.0.1/hook", "only http:// and https:// URLs with a host are posted to, not ftp"),
    ("file:///etc/passwd", "only http:// and https:// URLs"),
    ("not a url", "only http:// and https:// URLs"),
])
def test_a_refused_url_is_a_422_naming_the_rule_and_queues_nothing(signed: str, webhook: str,
                                                                   says: str) -> None:
    with httpx.Client(timeout=30) as http:
        thread = http.post(f"{signed}/threads", json={"metadata": {"graph_id": FAILING}}).json()["thread_id"]
        for route in (f"/threads/{thread}/runs", f"/threads/{thread}/runs/wait", "/runs", "/runs/stream"):
            refused = http.post(f"{signed}{route}", json={"assistant_id": FAILING, "input": {"fail": False},
                                                          "webhook": webhook})
            assert refused.status_code == 422, (route, refused.text)
            assert refused.headers["content-type"] == "application/problem+json"
            assert says in refused.json()["detail"] and "pa55word" not in refused.text
        assert http.get(f"{signed}/threads/{thread}/runs").json() == []


def test_a_batch_with_one_refused_webhook_queues_none_of_its_runs(signed_server: tuple[str, Path],
                                                                  receiver: Receiver) -> None:
    url, sessions = signed_server
    runs = [{"assistant_id": FAILING, "input": {"fail": False}, "webhook": receiver.url("/batch")},
            {"assistant_id": FAILING, "input": {"fail": False}, "webhook": "http://10.20.30.40/hook"}]

    async def story() -> None:
        client = get_client(url=url)
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await client.runs.create_batch(runs)
        assert refused.value.response.status_code == 422
        assert "refused by the egress rule" in refused.value.response.json()["detail"]
        assert deliveries_to(sessions, receiver.url("/batch")) == 0  # recorded before a run is queued
        [queued] = await client.runs.create_batch(runs[:1])
        assert receiver.wait_for("/batch")[0].json()["run_id"] == queued["run_id"]

    asyncio.run(story())
    assert deliveries_to(sessions, receiver.url("/batch")) == 1


def deliveries_to(sessions: Path, url: str) -> int:
    """How many deliveries to ``url`` the SQLite store at ``sessions`` keeps."""
    with closing(sqlite3.connect(sessions / "runs.db")) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM webhooks WHERE url = ?", (url,)).fetchone()[0])


def test_a_schedule_whose_webhook_the_rule_refuses_is_refused_when_it_is_made(signed: str,
                                                                             receiver: Receiver) -> None:
    async def story() -> None:
        client = get_client(url=signed)
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await client.crons.create(FAILING, schedule="0 9 * * *", input={"fail": False},
                                      webhook="http://10.20.30.40/hook")
        assert refused.value.response.status_code == 422
        assert "refused by the egress rule" in refused.value.response.json()["detail"]
        assert await client.crons.search(assistant_id=FAILING) == []
        kept = await client.crons.create(FAILING, schedule="0 9 * * *", input={"fail": False},
                                         webhook=receiver.url("/cron"))
        assert kept["payload"]["webhook"] == receiver.url("/cron")
        await client.crons.delete(kept["cron_id"])

    asyncio.run(story())


def test_unsigned_without_a_secret_and_the_server_says_so(tmp_path: Path, receiver: Receiver,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    with hook_server(str(tmp_path / "sessions")) as server:
        url = server.json_announcement()["url"]
        assert "run webhooks are sent unsigned" in server.stderr_line_containing("no signing secret")
        create_run(url, receiver.url("/unsigned"))
        hook = receiver.wait_for("/unsigned")[0]
    assert "X-GraphARC-Signature" not in hook.headers and hook.headers["X-GraphARC-Timestamp"]


def test_a_hook_is_given_up_once_its_attempts_are_used(tmp_path: Path, receiver: Receiver,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    receiver.answer("/down", then=503)
    with hook_server(str(tmp_path / "sessions"), "--webhook-attempts", "2") as server:
        run = create_run(server.json_announcement()["url"], receiver.url("/down"))
        delivery = delivery_once_settled(tmp_path / "sessions", run["run_id"])
    assert (delivery.status, delivery.attempts) == (FAILED, 2)
    assert delivery.last_error == "the receiver answered 503 Service Unavailable (attempt 2)"
    assert [hit.answered for hit in receiver.at("/down")] == [503, 503]


def test_a_hook_pending_when_the_server_is_killed_arrives_once_after_a_restart(
        tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    beside(monkeypatch)
    sessions = str(tmp_path / "sessions")
    a_hook_pending_at_a_kill_arrives_once_after_restart(receiver, sessions, lambda: hook_server(sessions))


@pytest.mark.parametrize(("options", "says"), [
    (("--webhook-secret-env", "GRAPHARC_TEST_NOT_SET"),
     "names the environment variable GRAPHARC_TEST_NOT_SET, which is not set or empty"),
    (("--webhook-secret-env", "not a name"), "must be the name of an environment variable"),
    (("--webhook-allow", "http://10.0.0.1/"), "is neither an IP address, a CIDR network"),
])
def test_a_bad_webhook_setting_stops_the_server_before_it_serves(tmp_path: Path, options: tuple[str, ...],
                                                                 says: str) -> None:
    with hook_server(str(tmp_path / "sessions"), *options) as server:
        status = server.wait()
    assert status == 2
    assert says in json.loads(server.stdout)["error"]["message"]
