"""The errors grapharc-gateway raises on purpose; each names the backend or variable at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError

_STATUS_HINTS = {
    400: "the provider refused the request as malformed; retrying would not change that",
    401: "the provider rejected the API key; check the key for this backend",
    402: "the provider account is out of credit",
    403: "the key is not allowed to use this model",
    404: "the provider does not know this model; check the spelling after the backend prefix",
    429: "rate limited; wait, or lower the run's concurrency",
}


class GatewayError(GraphARCError):
    """An error raised by one of grapharc-gateway's model backends."""


class MissingCredentialError(GatewayError):
    """A backend's API key is in neither the environment nor ./.env."""


class ProviderError(GatewayError):
    """A provider call failed: an HTTP error status, a timeout or a broken connection.

    ``retryable`` says whether the retry policy treats it as transient; ``attempts``
    is how many times the call was made before it was given up.
    """

    def __init__(self, spec: str, reason: str, *, status_code: int | None = None,
                 attempts: int = 1, retryable: bool = False) -> None:
        tried = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
        hint = _STATUS_HINTS.get(status_code or 0, "")
        if not hint and retryable:
            hint = "the provider or the network is failing; try again later"
        super().__init__(f"{spec}: {reason}{tried}", hint=hint)
        self.spec = spec
        self.status_code = status_code
        self.attempts = attempts
        self.retryable = retryable


class SpendCeilingError(GatewayError):
    """A SpendMeter refused a call (``before=True``) or a call crossed its ceiling.

    ``dimension`` is ``usd`` or ``unpriced_calls``.
    """

    def __init__(self, spec: str, dimension: str, limit: float, used: float, *, before: bool) -> None:
        def shown(value: float) -> str:
            return f"${value:.6g}" if dimension == "usd" else f"{value:g}"

        what = "spend" if dimension == "usd" else "unpriced calls"
        if before:
            message = (f"{spec} refused before the call: the {what} ceiling {shown(limit)} is "
                       f"already reached ({shown(used)} used)")
        else:
            message = (f"{spec} crossed the {what} ceiling {shown(limit)}: "
                       f"{shown(used)} used after this call")
        super().__init__(message, hint="raise the SpendMeter's ceiling or make the run cheaper")
        self.spec = spec
        self.dimension = dimension
        self.limit = limit
        self.used = used
        self.before = before


class ClaudeCLIError(GatewayError):
    """The ``claude`` executable could not be run or reported an error."""
