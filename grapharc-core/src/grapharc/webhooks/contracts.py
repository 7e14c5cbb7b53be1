"""What a webhook store keeps and promises, so any backend registered for the ``webhooks`` kind
serves a server.

A ``WebhookStore`` keeps one delivery per run created with a ``webhook`` URL, beside the run store
whose runs it joins (``open_store("sqlite:DIR", kind="webhooks")`` is ``DIR/runs.db``;
``postgresql://HOST/DB`` the same database as the runs). A delivery is recorded before its run is
queued, so no run can end without one; it becomes due once its run has ended, and a sender claims
it for one attempt at a time, so of several workers exactly one sends each attempt.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from grapharc.webhooks.records import Delivery

ORPHAN_SECONDS = 60.0
"""How long a pending delivery may go without a run before it is failed: its run was deleted
(rolled back, or deleted before its hook was sent), or never queued (the process died between
recording the delivery and queueing the run)."""


@runtime_checkable
class WebhookStore(Protocol):
    """Webhook deliveries. Every change is atomic across threads and processes; nothing is written
    when a call raises. A change by ``worker`` applies only while that worker holds the delivery's
    claim (False, nothing written, otherwise)."""

    def expect(self, delivery: Delivery) -> None:
        """Record ``delivery`` pending, before its run is queued."""
        ...

    def forget(self, run_id: str) -> None:
        """Delete the delivery of a run that was never queued (its queueing was refused)."""
        ...

    def has_due(self, now: float) -> bool:
        """Whether ``claim_due`` at ``now`` has anything to do (a due delivery, or an orphan to
        fail): a read that writes nothing, so an idle sender's look costs no write."""
        ...

    def claim_due(self, worker: str, now: float, hold: float, limit: int) -> builtins.list[Delivery]:
        """Claim up to ``limit`` pending deliveries whose run has ended and whose next attempt is
        due (oldest first) for ``worker``: each one attempt more, its next attempt put off to
        ``now + hold`` (a claim that runs out is another worker's to take). Also fails the pending
        deliveries left without a run for ``ORPHAN_SECONDS``."""
        ...

    def keep_body(self, run_id: str, worker: str, body: str) -> bool:
        """Fix the JSON the delivery posts (its first attempt's); every retry sends the same."""
        ...

    def delivered(self, run_id: str, worker: str, now: float) -> bool:
        """The receiver answered 2xx: the delivery is done for good."""
        ...

    def retry(self, run_id: str, worker: str, error: str, at: float) -> bool:
        """The attempt failed with ``error``; the next may begin at ``at``."""
        ...

    def fail(self, run_id: str, worker: str, error: str) -> bool:
        """Give the delivery up with ``error`` (never attempted again)."""
        ...

    def get(self, run_id: str) -> Delivery | None:
        """The delivery of run ``run_id``, or None."""
        ...

    def close(self) -> None:
        """Release connections; closing twice is harmless."""
        ...
