"""The webhook egress rule: loopback only by default; what the operator allows by network or host
name otherwise; every address a host resolves to checked; and an attempt connecting to the address
that was checked, so a DNS answer that changes afterwards (rebinding) cannot redirect it."""

from __future__ import annotations

import asyncio
import re
import socket
from typing import Any

import httpx
import pytest
from webhook_receiver import receiving

from grapharc.server.webhooks.attempt import Next, post
from grapharc.server.webhooks.egress import EgressRule, WebhookRefusedError
from grapharc.server.webhooks.settings import WebhookSettings

REAL_GETADDRINFO = socket.getaddrinfo


def answering(monkeypatch: pytest.MonkeyPatch, host: str, *answers: list[str]) -> list[str]:
    """Make ``host`` resolve to each of ``answers`` in turn (the last one from then on); the names
    looked up, in order."""
    asked: list[str] = []
    pending = list(answers)

    def getaddrinfo(name: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if name != host:
            return REAL_GETADDRINFO(name, port, *args, **kwargs)
        asked.append(name)
        addresses = pending.pop(0) if len(pending) > 1 else pending[0]
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/h", "http://localhost:9/h", "https://[::1]/h",
                                 "http://127.8.9.10/h", "http://[::ffff:127.0.0.1]/h"])
def test_loopback_is_allowed_by_default(url: str) -> None:
    assert EgressRule().target(url).address.is_loopback


@pytest.mark.parametrize(("url", "outside"), [("http://10.0.0.1/h", "10.0.0.1"),
                                              ("http://169.254.169.254/latest", "169.254.169.254"),
                                              ("http://[::ffff:10.0.0.1]/h", "10.0.0.1"),
                                              ("http://0.0.0.0:8000/", "0.0.0.0")])
def test_anything_else_is_refused_by_default_naming_the_rule(url: str, outside: str) -> None:
    said = f"resolves to {outside}, outside the addresses webhooks may reach (loopback addresses only, the " \
           "default)"
    with pytest.raises(WebhookRefusedError, match=re.escape(said)):
        EgressRule().target(url)


def test_allowed_networks_replace_the_default() -> None:
    rule = EgressRule.of(["10.0.0.0/8", "192.0.2.7"])
    assert str(rule.target("http://10.1.2.3/h").address) == "10.1.2.3"
    assert str(rule.target("http://192.0.2.7/h").address) == "192.0.2.7"
    with pytest.raises(WebhookRefusedError, match=r"only 10\.0\.0\.0/8, 192\.0\.2\.7 \(--webhook-allow\)"):
        rule.target("http://127.0.0.1/h")


def test_a_host_allowed_by_name_may_resolve_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, "hooks.internal", ["10.9.9.9"])
    assert str(EgressRule.of(["hooks.internal"]).target("https://hooks.internal/h").address) == "10.9.9.9"
    with pytest.raises(WebhookRefusedError, match=r"hooks\.internal resolves to 10\.9\.9\.9"):
        EgressRule().target("https://hooks.internal/h")


def test_every_address_a_host_resolves_to_must_be_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, "split.test", ["127.0.0.1", "10.0.0.5"])
    with pytest.raises(WebhookRefusedError, match=r"split\.test resolves to 10\.0\.0\.5, outside"):
        EgressRule().target("http://split.test/h")


def test_a_host_that_does_not_resolve_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(*_args: Any, **_kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fails)
    with pytest.raises(WebhookRefusedError, match=r"its host nowhere\.invalid does not resolve"):
        EgressRule().target("http://nowhere.invalid/h")


def test_an_attempt_connects_to_the_address_it_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The name resolves to loopback when checked and to another address after: the POST still
    reaches the receiver on loopback, named by its host, and the name is looked up once."""
    with receiving() as receiver:
        port = receiver.base.rsplit(":", 1)[1]
        asked = answering(monkeypatch, "rebind.test", ["127.0.0.1"], ["10.0.0.66"])

        async def attempt() -> Next:
            async with httpx.AsyncClient(trust_env=False) as client:
                return (await post(client, WebhookSettings(timeout=30), f"http://rebind.test:{port}/pinned",
                                   "run-1", b'{"status": "success"}')).next

        assert asyncio.run(attempt()) is Next.DONE
        [hit] = receiver.at("/pinned")
    assert hit.headers["Host"] == f"rebind.test:{port}" and hit.body == b'{"status": "success"}'
    assert asked == ["rebind.test"]
