"""Every OpenAI-wire backend through real HTTP: completion, tools, structured output, streaming, async."""

from __future__ import annotations

import asyncio

import pytest
from gateway_fakes import Reply
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from grapharc.gateway import WireChatModel, get_model

BACKENDS = {
    "openai": ("OPENAI_API_KEY", "gpt-4o-mini"),
    "openrouter": ("OPENROUTER_API_KEY", "anthropic/claude-haiku-4.5"),
    "ollama": (None, "llama3.1"),
    "novita": ("NOVITA_API_KEY", "meta-llama/llama-3.1-8b-instruct"),
}


@pytest.fixture(params=sorted(BACKENDS))
def wire(request, fake_openai, monkeypatch):
    """A model on each wire backend, pointed at the fake server through <BACKEND>_BASE_URL."""
    backend = request.param
    key_variable, model = BACKENDS[backend]
    if key_variable:
        monkeypatch.setenv(key_variable, f"key-for-{backend}")
    monkeypatch.setenv(f"{backend.upper()}_BASE_URL", fake_openai.base_url)
    return backend, get_model(f"{backend}/{model}")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class Verdict(BaseModel):
    supported: bool
    reason: str


def test_every_wire_backend_is_the_shared_model_class(wire):
    backend, model = wire
    assert isinstance(model, WireChatModel)
    assert model.backend == backend and model.max_retries == 0


def test_a_plain_completion_travels_over_http_with_the_backends_key(wire, fake_openai):
    backend, model = wire
    fake_openai.script(Reply(content="a real answer"))
    reply = model.invoke([SystemMessage("be brief"), HumanMessage("hello")])
    assert reply.content == "a real answer"
    request = fake_openai.completions[-1]
    assert request.body["model"] == model.model_name
    assert request.body["messages"] == [{"role": "system", "content": "be brief"},
                                        {"role": "user", "content": "hello"}]
    expected_key = "no-key-needed" if backend == "ollama" else f"key-for-{backend}"
    assert request.headers["authorization"] == f"Bearer {expected_key}"


def test_tool_calls_are_sent_and_parsed(wire, fake_openai):
    _, model = wire
    call = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    fake_openai.script(Reply(content=None, tool_calls=[call]))
    reply = model.bind_tools([get_weather]).invoke("weather in Oslo?")
    assert reply.tool_calls[0]["name"] == "get_weather"
    assert reply.tool_calls[0]["args"] == {"city": "Oslo"}
    sent = fake_openai.completions[-1].body["tools"]
    assert sent[0]["function"]["name"] == "get_weather"


def test_structured_output_is_parsed_into_the_schema(wire, fake_openai):
    _, model = wire
    fake_openai.script(Reply(content='{"supported": true, "reason": "quoted verbatim"}'))
    verdict = model.with_structured_output(Verdict).invoke("is it supported?")
    assert verdict == Verdict(supported=True, reason="quoted verbatim")
    assert fake_openai.completions[-1].body["response_format"]["type"] == "json_schema"


def test_streaming_delivers_chunks_and_asks_for_usage(wire, fake_openai):
    _, model = wire
    fake_openai.script(Reply(content="one two three"))
    chunks = list(model.stream("count"))
    assert "".join(str(c.content) for c in chunks) == "one two three"
    assert len([c for c in chunks if c.content]) == 3
    body = fake_openai.completions[-1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_async_invoke_and_async_stream_work(wire, fake_openai):
    _, model = wire

    async def run() -> tuple[AIMessage, str]:
        fake_openai.script(Reply(content="async answer"), Reply(content="async stream"))
        reply = await model.ainvoke("hi")
        streamed = "".join([str(c.content) async for c in model.astream("hi")])
        return reply, streamed

    reply, streamed = asyncio.run(run())
    assert reply.content == "async answer" and streamed == "async stream"


def test_max_tokens_goes_by_the_name_each_provider_reads(wire, fake_openai):
    backend, model = wire
    model.bind(max_tokens=99).invoke("hi")
    body = fake_openai.completions[-1].body
    field = "max_completion_tokens" if backend == "openai" else "max_tokens"
    assert body[field] == 99


def test_an_explicit_base_url_and_key_beat_the_settings(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = get_model("openai/gpt-4o-mini", base_url=fake_openai.base_url, api_key="explicit")
    assert model.invoke("hi").content == "echo: hi"
    assert fake_openai.completions[-1].headers["authorization"] == "Bearer explicit"
