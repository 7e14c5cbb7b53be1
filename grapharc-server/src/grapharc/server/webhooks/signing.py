"""How a webhook says it came from this server: HMAC-SHA256 of ``"<timestamp>." + body``.

``X-GraphARC-Timestamp`` carries the Unix time of the attempt and ``X-GraphARC-Signature``
``sha256=<hex>`` the HMAC of the timestamp, a dot and the exact body bytes under the operator's
secret, so a receiver checks both the body and how old it is (a replay of an old hook carries an
old timestamp). ``X-GraphARC-Delivery`` names the run, the same on every attempt, so a receiver
can drop a repeat. Without a secret only the timestamp and delivery headers are sent.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE = "X-GraphARC-Signature"
TIMESTAMP = "X-GraphARC-Timestamp"
DELIVERY = "X-GraphARC-Delivery"


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """``sha256=<hex>``: the HMAC-SHA256 of ``b"<timestamp>." + body`` under ``secret``."""
    return "sha256=" + hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def headers(secret: bytes | None, run_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one attempt (signed when there is a ``secret``)."""
    sent = {"Content-Type": "application/json", TIMESTAMP: str(timestamp), DELIVERY: run_id}
    if secret is not None:
        sent[SIGNATURE] = signature(secret, timestamp, body)
    return sent
