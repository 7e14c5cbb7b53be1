"""The one retry policy every OpenAI-wire backend uses: which failures are re-issued, and when.

Written here rather than taken from tenacity because the policy is the product:
delays that strictly increase (jitter shrinks a doubling delay and never centres
it), a ``Retry-After`` that may raise a delay but never lower it, and streams that
are never re-issued once a chunk has reached the caller.

Retried: timeouts, broken or reset connections, HTTP 408, 429 and 5xx. Everything
else is a verdict or unrecognised and is raised on the first attempt: 400, 401,
402, 403, any other status, content refusals, and errors this module does not know.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, NoReturn, TypeVar

from grapharc.errors import ConfigurationError

T = TypeVar("T")
Translate = Callable[[BaseException, int], BaseException]

TRANSIENT_STATUSES = frozenset({408, 429})


@functools.cache
def http_errors(name: str) -> tuple[type[BaseException], ...]:
    """Exception class ``name`` (``TransportError``, ``TimeoutException``) of each installed
    HTTP client the openai SDK may be built on: ``httpx``, or its successor ``httpx2``."""
    classes = []
    for module_name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        classes.append(getattr(module, name))
    return tuple(classes)


def is_transient(error: BaseException) -> bool:
    """True for failures worth re-issuing: timeouts, broken connections, 408, 429 and 5xx."""
    import openai

    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        return status in TRANSIENT_STATUSES or 500 <= status <= 599
    return isinstance(error, (openai.APIConnectionError, *http_errors("TransportError")))


def retry_after_seconds(error: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """The wait a failed response asked for (``retry-after-ms`` or ``Retry-After``), if any."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return _finite_non_negative(float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _finite_non_negative(float(value))
    except ValueError:
        pass
    try:
        return _finite_non_negative(parsedate_to_datetime(value).timestamp() - now())
    except (TypeError, ValueError):
        return None


def _finite_non_negative(seconds: float) -> float | None:
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and delays; ``sleep``, ``async_sleep``, ``uniform`` and ``clock`` are injectable.

    The delay before retry *n* (1-based) is ``min(max_delay, initial_delay * multiplier**(n-1))``
    scaled by a jitter factor drawn from ``jitter``; the draw never goes below the previous
    delay, so delays strictly increase below the cap and never decrease at it. A
    ``Retry-After`` longer than that delay replaces it, capped at ``max_delay``.
    """

    attempts: int = 3
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: tuple[float, float] = (0.75, 1.0)
    sleep: Callable[[float], Any] = field(default=time.sleep, compare=False)
    async_sleep: Callable[[float], Awaitable[Any]] = field(default=asyncio.sleep, compare=False)
    uniform: Callable[[float, float], float] = field(default=random.uniform, compare=False)
    clock: Callable[[], float] = field(default=time.time, compare=False)

    def __post_init__(self) -> None:
        low, high = self.jitter
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ConfigurationError(f"RetryPolicy.attempts must be an integer >= 1, got {self.attempts!r}")
        if not 0 < self.initial_delay <= self.max_delay:
            raise ConfigurationError(
                f"RetryPolicy needs 0 < initial_delay <= max_delay, got {self.initial_delay!r} "
                f"and {self.max_delay!r}")
        if not 0 < low <= high <= 1:
            raise ConfigurationError(
                f"RetryPolicy.jitter must satisfy 0 < low <= high <= 1, got {self.jitter!r}")
        if self.multiplier * low <= high:
            raise ConfigurationError(
                f"RetryPolicy with multiplier {self.multiplier!r} and jitter {self.jitter!r} would not "
                "give strictly increasing delays (multiplier * low must exceed high)")

    def backoff(self, retry: int, previous: float = 0.0) -> float:
        """The jittered delay before retry ``retry`` (1-based), never below ``previous``."""
        to_cap = math.ceil(math.log(self.max_delay / self.initial_delay, self.multiplier))
        base = min(self.max_delay, self.initial_delay * self.multiplier ** min(retry - 1, to_cap))
        low, high = self.jitter
        floor = min(max(low * base, previous), high * base)
        return self.uniform(floor, high * base)

    def delay(self, retry: int, previous: float, error: BaseException) -> tuple[float, float]:
        """``(seconds to wait, the backoff drawn)``: the backoff, raised by a capped Retry-After."""
        drawn = self.backoff(retry, previous)
        asked = retry_after_seconds(error, self.clock)
        if asked is None:
            return drawn, drawn
        return max(drawn, min(asked, self.max_delay)), drawn

    def call(self, fn: Callable[[], T], translate: Translate) -> T:
        """Call ``fn`` until it succeeds, a non-transient error occurs, or attempts run out."""
        previous = 0.0
        for attempt in range(1, self.attempts + 1):
            try:
                return fn()
            except Exception as error:
                if attempt == self.attempts or not is_transient(error):
                    _raise(error, translate(error, attempt))
                wait, previous = self.delay(attempt, previous, error)
                self.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def acall(self, fn: Callable[[], Awaitable[T]], translate: Translate) -> T:
        """``call`` for coroutines, waiting with ``async_sleep``."""
        previous = 0.0
        for attempt in range(1, self.attempts + 1):
            try:
                return await fn()
            except Exception as error:
                if attempt == self.attempts or not is_transient(error):
                    _raise(error, translate(error, attempt))
                wait, previous = self.delay(attempt, previous, error)
                await self.async_sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def stream(self, open_stream: Callable[[], Iterator[T]], translate: Translate) -> Iterator[T]:
        """Yield a stream's items, re-opening it only while no item has reached the caller."""
        previous = 0.0
        for attempt in range(1, self.attempts + 1):
            iterator = open_stream()
            try:
                first = next(iterator)
            except StopIteration:
                return
            except Exception as error:
                if attempt == self.attempts or not is_transient(error):
                    _raise(error, translate(error, attempt))
                wait, previous = self.delay(attempt, previous, error)
                self.sleep(wait)
                continue
            yield first
            try:
                yield from iterator
            except Exception as error:
                _raise(error, translate(error, attempt))
            return

    async def astream(self, open_stream: Callable[[], AsyncIterator[T]],
                      translate: Translate) -> AsyncIterator[T]:
        """``stream`` for async iterators."""
        previous = 0.0
        for attempt in range(1, self.attempts + 1):
            iterator = open_stream()
            try:
                first = await anext(iterator)
            except StopAsyncIteration:
                return
            except Exception as error:
                if attempt == self.attempts or not is_transient(error):
                    _raise(error, translate(error, attempt))
                wait, previous = self.delay(attempt, previous, error)
                await self.async_sleep(wait)
                continue
            yield first
            try:
                async for item in iterator:
                    yield item
            except Exception as error:
                _raise(error, translate(error, attempt))
            return


def _raise(original: BaseException, translated: BaseException) -> NoReturn:
    if translated is original:
        raise original
    raise translated from original
