"""The retry policy against a real server: what is re-issued, what is raised at once, and when."""

from __future__ import annotations

import asyncio

import pytest
from gateway_fakes import Reply, Reset, Slow, Status
from langchain_core.exceptions import ModelRefusalError
from pydantic import BaseModel

from grapharc.gateway import ProviderError, get_model


def top(low: float, high: float) -> float:
    return high


@pytest.fixture
def model_for(fake_openai, recorded):
    def build(spec: str = "openai/gpt-4o-mini", **kwargs):
        kwargs.setdefault("retry_policy", recorded.policy(uniform=top))
        return get_model(spec, base_url=fake_openai.base_url, api_key="k", **kwargs)
    return build


def test_a_429_is_retried_after_the_wait_its_retry_after_asks_for(model_for, fake_openai, recorded):
    fake_openai.script(Status(429, "slow down", retry_after="4"), Reply(content="second time lucky"))
    assert model_for().invoke("hi").content == "second time lucky"
    assert len(fake_openai.completions) == 2
    assert recorded.sleeps == [4.0]


def test_a_retry_after_shorter_than_the_backoff_does_not_shorten_it(model_for, fake_openai, recorded):
    fake_openai.script(Status(429, retry_after_ms="10"), Reply())
    model_for().invoke("hi")
    assert recorded.sleeps == [0.5]


def test_a_server_error_then_a_reset_connection_are_both_retried(model_for, fake_openai, recorded):
    fake_openai.script(Status(500), Reset(), Reply(content="third attempt"))
    assert model_for().invoke("hi").content == "third attempt"
    assert len(fake_openai.completions) == 3
    assert recorded.sleeps == [0.5, 1.0]


def test_a_response_slower_than_the_client_timeout_is_retried(model_for, fake_openai, recorded):
    fake_openai.script(Slow(5.0), Reply(content="in time"))
    assert model_for(timeout=0.5).invoke("hi").content == "in time"
    assert len(fake_openai.completions) == 2 and len(recorded.sleeps) == 1


def test_three_failures_give_up_with_a_provider_error_naming_the_spec(model_for, fake_openai, recorded):
    fake_openai.script(Status(503), Status(502), Status(500, "still down"))
    with pytest.raises(ProviderError) as raised:
        model_for().invoke("hi")
    error = raised.value
    assert str(error) == "openai/gpt-4o-mini: HTTP 500: still down (gave up after 3 attempts)"
    assert (error.status_code, error.attempts, error.retryable) == (500, 3, True)
    assert len(fake_openai.completions) == 3
    assert recorded.sleeps == [0.5, 1.0]


@pytest.mark.parametrize("code", [400, 401, 402, 403])
def test_a_verdict_is_raised_on_the_first_attempt(model_for, fake_openai, recorded, code):
    fake_openai.script(Status(code, "no"), Reply(content="never sent"))
    with pytest.raises(ProviderError) as raised:
        model_for().invoke("hi")
    assert raised.value.status_code == code and raised.value.attempts == 1 and not raised.value.retryable
    assert raised.value.hint
    assert len(fake_openai.completions) == 1 and recorded.sleeps == []


def test_an_unrecognised_status_is_not_retried(model_for, fake_openai, recorded):
    fake_openai.script(Status(418, "teapot"), Reply())
    with pytest.raises(ProviderError, match="HTTP 418: teapot"):
        model_for().invoke("hi")
    assert len(fake_openai.completions) == 1


def test_a_content_refusal_is_raised_on_the_first_attempt(model_for, fake_openai):
    class Answer(BaseModel):
        text: str

    fake_openai.script(Reply(content=None, refusal="I can't help with that."), Reply(content='{"text": "x"}'))
    with pytest.raises(ModelRefusalError):
        model_for().with_structured_output(Answer).invoke("something refused")
    assert len(fake_openai.completions) == 1


def test_the_openai_clients_own_retries_are_off(model_for, fake_openai, recorded):
    fake_openai.script(Status(500), Reply())
    with pytest.raises(ProviderError):
        model_for(retry_policy=recorded.policy(attempts=1)).invoke("hi")
    assert len(fake_openai.completions) == 1


def test_a_stream_that_fails_before_its_first_chunk_is_reissued(model_for, fake_openai, recorded):
    fake_openai.script(Status(429, retry_after="1"), Reply(content="streamed after all"))
    text = "".join(str(c.content) for c in model_for().stream("hi"))
    assert text == "streamed after all"
    assert len(fake_openai.completions) == 2 and recorded.sleeps == [1.0]


def test_a_stream_is_not_reissued_once_a_chunk_has_reached_the_caller(model_for, fake_openai, recorded):
    fake_openai.script(Reply(content="one two three four", reset_after_chunks=2), Reply(content="never"))
    received = []
    with pytest.raises(ProviderError, match="connection failed") as raised:
        for chunk in model_for().stream("hi"):
            received.append(chunk.content)
    assert received[:2] == ["", "one"]
    assert raised.value.attempts == 1
    assert len(fake_openai.completions) == 1 and recorded.sleeps == []


def test_async_calls_follow_the_same_policy(model_for, fake_openai, recorded):
    async def run() -> tuple[str, str]:
        fake_openai.script(Status(503), Reply(content="async retried"),
                           Reset(), Reply(content="async stream retried"))
        model = model_for()
        reply = await model.ainvoke("hi")
        streamed = "".join([str(c.content) async for c in model.astream("hi")])
        return str(reply.content), streamed

    assert asyncio.run(run()) == ("async retried", "async stream retried")
    assert len(fake_openai.completions) == 4 and recorded.sleeps == [0.5, 0.5]


def test_async_verdicts_are_raised_on_the_first_attempt(model_for, fake_openai, recorded):
    fake_openai.script(Status(401, "bad key"))
    with pytest.raises(ProviderError, match="HTTP 401: bad key"):
        asyncio.run(model_for().ainvoke("hi"))
    assert len(fake_openai.completions) == 1 and recorded.sleeps == []
