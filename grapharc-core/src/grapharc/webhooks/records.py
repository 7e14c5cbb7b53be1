"""A webhook delivery as its store keeps it: where a run's end is to be posted, and how far that got.

A delivery is ``pending`` from its run's creation until the receiver answers 2xx (``delivered``)
or the sender gives up (``failed``: a 4xx answer, a refused address, or its attempts used up).
``attempts`` counts the attempts begun (a claim begins one); ``next_attempt_at`` is when the next
may begin (while one is in flight: when its claim runs out, so a worker that died mid-attempt
is replaced); ``body`` is the JSON posted, fixed at the first attempt so every retry sends the
same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
STATUSES = (PENDING, DELIVERED, FAILED)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One run's webhook delivery."""

    run_id: str
    thread_id: str
    url: str
    created_at: float
    status: str = PENDING
    attempts: int = 0
    next_attempt_at: float | None = None
    last_error: str | None = None
    worker: str | None = None
    body: str | None = None
    delivered_at: float | None = None


def delivery_of(row: Any) -> Delivery:
    """A store row (columns named as ``Delivery``'s fields) as a record."""
    return Delivery(run_id=row["run_id"], thread_id=row["thread_id"], url=row["url"],
                    created_at=row["created_at"], status=row["status"], attempts=row["attempts"],
                    next_attempt_at=row["next_attempt_at"], last_error=row["last_error"],
                    worker=row["worker"], body=row["body"], delivered_at=row["delivered_at"])
