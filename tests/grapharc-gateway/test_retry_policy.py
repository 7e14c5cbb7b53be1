"""The retry policy itself: its delays, what it retries, and how Retry-After moves a delay."""

from __future__ import annotations

import email.utils
from itertools import pairwise

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.exceptions import ModelRefusalError

from grapharc.errors import ConfigurationError
from grapharc.gateway import RetryPolicy
from grapharc.gateway.retry import is_transient, retry_after_seconds

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(code: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx.Response(code, headers=headers or {}, request=REQUEST)
    return openai.APIStatusError(f"HTTP {code}", response=response, body=None)


def top(low: float, high: float) -> float:
    return high


def bottom(low: float, high: float) -> float:
    return low


def test_three_attempts_half_a_second_doubling_to_a_twenty_second_cap_are_the_defaults():
    policy = RetryPolicy()
    assert (policy.attempts, policy.initial_delay, policy.multiplier, policy.max_delay, policy.jitter) \
        == (3, 0.5, 2.0, 20.0, (0.75, 1.0))


def test_the_undrawn_delays_double_from_half_a_second_and_stop_at_the_cap():
    policy = RetryPolicy(uniform=top, attempts=10)
    delays, previous = [], 0.0
    for retry in range(1, 9):
        previous = policy.backoff(retry, previous)
        delays.append(previous)
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 20.0]


def test_jitter_shrinks_a_delay_to_three_quarters_at_most():
    policy = RetryPolicy(uniform=bottom)
    assert policy.backoff(1) == 0.375
    assert policy.backoff(2, previous=0.375) == 0.75


@given(st.randoms(use_true_random=False))
def test_delays_strictly_increase_below_the_cap_and_never_decrease_at_it(rng):
    policy = RetryPolicy(uniform=rng.uniform, attempts=12)
    delays, previous = [], 0.0
    for retry in range(1, 12):
        previous = policy.backoff(retry, previous)
        delays.append(previous)
    below_cap = [d for d in delays if d < 0.75 * policy.max_delay]
    assert all(a < b for a, b in pairwise(below_cap))
    assert all(a <= b for a, b in pairwise(delays))
    assert all(0.75 * 0.5 <= d <= policy.max_delay for d in delays)


def test_a_policy_whose_jitter_could_shrink_a_delay_below_the_last_is_refused():
    with pytest.raises(ConfigurationError, match="strictly increasing"):
        RetryPolicy(multiplier=1.2, jitter=(0.5, 1.0))


@pytest.mark.parametrize("overrides", [{"attempts": 0}, {"initial_delay": 0}, {"jitter": (0.0, 1.0)},
                                       {"initial_delay": 30.0}])
def test_nonsense_settings_are_refused(overrides):
    with pytest.raises(ConfigurationError):
        RetryPolicy(**overrides)


@pytest.mark.parametrize("code", [408, 429, 500, 502, 503, 504, 529])
def test_timeouts_rate_limits_and_server_errors_are_transient(code):
    assert is_transient(status_error(code))


@pytest.mark.parametrize("code", [400, 401, 402, 403, 404, 409, 422])
def test_verdicts_and_unrecognised_statuses_are_not_transient(code):
    assert not is_transient(status_error(code))


@pytest.mark.parametrize("error", [openai.APITimeoutError(request=REQUEST),
                                   openai.APIConnectionError(request=REQUEST)])
def test_timeouts_and_broken_connections_reported_by_the_sdk_are_transient(error):
    assert is_transient(error)


@pytest.mark.parametrize("client", ["httpx", "httpx2"])
@pytest.mark.parametrize("name", ["ReadTimeout", "ConnectError", "RemoteProtocolError"])
def test_raw_transport_errors_of_either_http_client_are_transient(client, name):
    module = pytest.importorskip(client)
    assert is_transient(getattr(module, name)("broken"))


@pytest.mark.parametrize("error", [ValueError("malformed"), KeyError("choices"),
                                   ModelRefusalError("I can't help with that")])
def test_content_refusals_and_unrecognised_errors_are_not_transient(error):
    assert not is_transient(error)


def test_retry_after_raises_a_shorter_delay():
    policy = RetryPolicy(uniform=top)
    assert policy.delay(1, 0.0, status_error(429, {"Retry-After": "7"})) == (7.0, 0.5)


def test_retry_after_never_lowers_a_longer_delay():
    policy = RetryPolicy(uniform=top)
    assert policy.delay(2, 0.5, status_error(429, {"Retry-After": "0.1"})) == (1.0, 1.0)


def test_retry_after_is_itself_capped():
    policy = RetryPolicy(uniform=top)
    assert policy.delay(1, 0.0, status_error(429, {"Retry-After": "3600"}))[0] == 20.0


def test_retry_after_in_milliseconds_and_as_a_date_are_read():
    assert retry_after_seconds(status_error(429, {"retry-after-ms": "2500"})) == 2.5
    date = email.utils.formatdate(1_000_010, usegmt=True)
    assert retry_after_seconds(status_error(503, {"Retry-After": date}), now=lambda: 1_000_000) == 10.0


@pytest.mark.parametrize("value", ["soon", "-5", "nan"])
def test_an_unreadable_or_negative_retry_after_never_shortens_anything(value):
    seconds = retry_after_seconds(status_error(429, {"Retry-After": value}))
    assert seconds is None or seconds == 0.0


def test_a_call_is_retried_until_it_succeeds_and_the_waits_are_the_policys():
    sleeps: list[float] = []
    outcomes = iter([status_error(503), status_error(429), "ok"])

    def call() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert RetryPolicy(sleep=sleeps.append, uniform=top).call(call, lambda e, n: e) == "ok"
    assert sleeps == [0.5, 1.0]


def test_a_verdict_is_raised_on_the_first_attempt_without_waiting():
    sleeps: list[float] = []
    calls = []

    def call() -> None:
        calls.append(1)
        raise status_error(401)

    with pytest.raises(openai.APIStatusError):
        RetryPolicy(sleep=sleeps.append).call(call, lambda e, n: e)
    assert calls == [1] and sleeps == []


def test_the_last_failure_is_translated_with_the_number_of_attempts():
    seen = []

    def translate(error: BaseException, attempts: int) -> BaseException:
        seen.append(attempts)
        return RuntimeError(f"gave up after {attempts}")

    def call() -> None:
        raise status_error(500)

    with pytest.raises(RuntimeError, match="gave up after 3") as raised:
        RetryPolicy(sleep=lambda s: None).call(call, translate)
    assert seen == [3] and isinstance(raised.value.__cause__, openai.APIStatusError)


def test_a_stream_is_reopened_only_until_its_first_item_arrives():
    opened = []

    def open_stream():
        opened.append(1)
        if len(opened) == 1:
            raise status_error(502)
        yield "first"
        raise httpx.RemoteProtocolError("reset mid-stream", request=REQUEST)

    policy = RetryPolicy(sleep=lambda s: None)
    received = []
    with pytest.raises(httpx.RemoteProtocolError):
        for item in policy.stream(open_stream, lambda e, n: e):
            received.append(item)
    assert received == ["first"] and len(opened) == 2
