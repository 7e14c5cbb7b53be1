"""Failed sign-ins slow the next ones down, per user name and per client address, on every worker.

Each failed sign-in is recorded in the session store (``SignInRecords``) against the user name tried
(known or not, so the answer tells nothing about which names exist) and the client's address. While
either has its limit of failures within the last ``window`` seconds (the auth file's ``[sign_in]``:
5 per user and 20 per address in 15 minutes unless it says otherwise), a sign-in for it is refused
with 429 and ``Retry-After`` (when the oldest of those failures leaves the window) before its
password is checked. The records are in the store every worker shares, so ``serve --workers N``,
or several machines over one PostgreSQL database, allow what one process does, not N times it. A
success records nothing and clears nothing. The address is the TCP peer's: behind a reverse proxy
every client has the proxy's, so the per-address limit then counts them all together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grapharc.server.auth import SignInLimits
from grapharc.session.contracts import SignInRecords

NAME_CHARS = 200
"""A user name tried is recorded by at most its first this many characters."""


@dataclass(frozen=True)
class Throttle:
    """The sign-in limits over the records every worker shares."""

    records: SignInRecords
    limits: SignInLimits

    def _subjects(self, name: str, address: str) -> dict[str, int]:
        """What a sign-in is counted against, each with its limit."""
        return {f"user:{name[:NAME_CHARS].casefold()}": self.limits.per_user,
                f"address:{address}": self.limits.per_address}

    def retry_after(self, name: str, address: str, now: float) -> int:
        """Whole seconds before a sign-in as ``name`` from ``address`` may be tried (0: now)."""
        subjects = self._subjects(name, address)
        failures = self.records.sign_in_failures(subjects, now - self.limits.window)
        waits = [times[len(times) - subjects[subject]] + self.limits.window - now
                 for subject, times in failures.items() if len(times) >= subjects[subject]]
        return max((max(1, math.ceil(wait)) for wait in waits), default=0)

    def failed(self, name: str, address: str, now: float) -> None:
        """Record a failed sign-in as ``name`` from ``address``."""
        self.records.sign_in_failed(self._subjects(name, address), now, now - self.limits.window)
