"""The private methods of langchain-openai's ChatOpenAI that ``grapharc.gateway.base`` overrides,
checked against the version installed.

``WireChatModel`` renames ``max_completion_tokens`` back to ``max_tokens`` for providers other than
OpenAI (``_get_request_payload``), prices a stream's usage chunk from the raw chunk's ``usage``
(``_convert_chunk_to_generation_chunk``) and keeps prices out of the sum of counts
(``_combine_llm_outputs``): none has a public hook. grapharc-gateway's pyproject.toml caps
langchain-openai to the minor release these tests passed on, and they fail naming it and its
version when a method is gone or takes other parameters. (``_generate``, ``_agenerate``,
``_stream``, ``_astream`` and ``_llm_type`` are langchain-core's documented way to write a chat
model, not ChatOpenAI's internals.)
"""

from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

OVERRIDDEN = {
    "_get_request_payload": ["self", "input_", "stop", "kwargs"],
    "_convert_chunk_to_generation_chunk": ["self", "chunk", "default_chunk_class", "base_generation_info"],
    "_combine_llm_outputs": ["self", "llm_outputs"],
}


def changed(what: str) -> str:
    """The failure naming langchain-openai, its version and what changed."""
    return (f"langchain-openai {version('langchain-openai')} changed {what}, which grapharc.gateway.base "
            "overrides: adapt WireChatModel, then move grapharc-gateway's cap on langchain-openai "
            "(grapharc-gateway/pyproject.toml) to this release")


@pytest.mark.parametrize(("name", "parameters"), OVERRIDDEN.items(), ids=list(OVERRIDDEN))
def test_chatopenai_still_has_each_private_method_the_gateway_overrides(name, parameters):
    method = getattr(ChatOpenAI, name, None)
    assert callable(method), changed(f"ChatOpenAI.{name} (it is gone)")
    found = list(inspect.signature(method).parameters)
    assert found == parameters, changed(f"ChatOpenAI.{name}'s parameters (now {found})")


def test_chatopenai_still_sends_max_tokens_by_the_name_only_openai_reads():
    """Why ``WireChatModel`` renames it for every other provider."""
    payload = ChatOpenAI(model="m", api_key="k", max_tokens=7)._get_request_payload([HumanMessage("hi")])
    sent = {name: payload[name] for name in ("max_tokens", "max_completion_tokens") if name in payload}
    assert sent == {"max_completion_tokens": 7}, changed(f"the request's token limit (now {sent})")
