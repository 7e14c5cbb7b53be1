"""One attempt at a webhook: a POST of the body to the checked address, bounded in time, and what
to do next: done (2xx), try again later (5xx, a timeout or a connection error) or give up (4xx, a
redirect, which is never followed, or a URL the egress rule now refuses)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from enum import Enum

import httpx

from grapharc.server.webhooks import signing
from grapharc.server.webhooks.egress import WebhookRefusedError
from grapharc.server.webhooks.settings import WebhookSettings
from grapharc.stores import offload


class Next(Enum):
    """What follows an attempt."""

    DONE = "done"
    RETRY = "retry"
    GIVE_UP = "give up"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an attempt went: what follows, and why when it was not done."""

    next: Next
    error: str | None = None


async def post(client: httpx.AsyncClient, settings: WebhookSettings, url: str, run_id: str,
               body: bytes) -> Outcome:
    """POST ``body`` to ``url`` once, within ``settings.timeout`` seconds, resolving included."""
    try:
        async with asyncio.timeout(settings.timeout):
            target = await offload.to_thread(settings.rule.target, url)
            headers = signing.headers(settings.secret, run_id, int(time.time()), body)
            headers["Host"] = target.url.netloc.decode("ascii")
            answer = await client.post(target.pinned(), content=body, headers=headers,
                                       extensions={"sni_hostname": target.url.host})
    except WebhookRefusedError as exc:
        return Outcome(Next.GIVE_UP, str(exc))
    except (TimeoutError, httpx.TimeoutException):
        return Outcome(Next.RETRY, f"no answer within {settings.timeout:g}s")
    except httpx.HTTPError as exc:
        return Outcome(Next.RETRY, f"{type(exc).__name__}: {exc}")
    if answer.is_success:
        return Outcome(Next.DONE)
    said = f"the receiver answered {answer.status_code} {answer.reason_phrase}".rstrip()
    if answer.status_code >= 500:
        return Outcome(Next.RETRY, said)
    return Outcome(Next.GIVE_UP, said + (" (redirects are not followed)" if answer.is_redirect else ""))
