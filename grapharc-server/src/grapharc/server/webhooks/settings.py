"""What the operator configured for webhooks: the signing secret, the egress rule and the bounds on
delivery (time per attempt, attempts, backoff)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from grapharc.errors import ConfigurationError
from grapharc.server.webhooks.egress import EgressRule

DEFAULT_TIMEOUT = 10.0
"""Seconds one attempt may take, connecting and reading the answer included."""
DEFAULT_ATTEMPTS = 5
BACKOFF_SECONDS = 1.0
"""The wait after a first failed attempt; it doubles after each, up to ``BACKOFF_CAP``."""
BACKOFF_CAP = 300.0


@dataclass(frozen=True)
class WebhookSettings:
    """``secret`` signs every hook (None: unsigned); ``rule`` says where hooks may go."""

    secret: bytes | None = None
    rule: EgressRule = field(default_factory=EgressRule)
    timeout: float = DEFAULT_TIMEOUT
    attempts: int = DEFAULT_ATTEMPTS

    def backoff(self, attempts: int) -> float:
        """Seconds to wait before the attempt after ``attempts`` failed ones."""
        return float(min(BACKOFF_SECONDS * 2 ** (attempts - 1), BACKOFF_CAP))


def secret_from(variable: str | None) -> bytes | None:
    """The value of the environment variable ``variable`` names, as the signing secret; None when
    none is named; refused when the variable is unset or empty (a server configured to sign must
    never send unsigned hooks instead)."""
    if variable is None:
        return None
    value = os.environ.get(variable, "")
    if not value:
        raise ConfigurationError(f"webhook_secret_env names the environment variable {variable}, which is "
                                 "not set or empty",
                                 hint=f"export {variable}=<a long random string>, or leave "
                                      "webhook_secret_env out to send hooks unsigned")
    return value.encode()
