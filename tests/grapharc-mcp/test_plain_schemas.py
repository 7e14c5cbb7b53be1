"""The quick check of plain input schemas: compiled once per tool, it lets a call that certainly fits
skip jsonschema, and it never passes arguments jsonschema would refuse (it only ever says "valid")."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_agents import agent_for, call, close_sources, of_phase, policy_rules, reply, run, told
from mcp_setup import stdio_entry

from grapharc.mcp import tools
from grapharc.mcp.plain_schemas import quick_check
from grapharc.mcp.schemas import problems

PLAIN = [
    {"type": "object", "properties": {"text": {"title": "Text", "type": "string"}}, "required": ["text"],
     "title": "echoArguments"},
    {"type": "object", "properties": {"n": {"type": "integer", "default": 5}, "x": {"type": "number"},
                                      "flag": {"type": "boolean"}, "any": {"description": "anything"}},
     "additionalProperties": False},
    {"properties": {"items": {"type": "array"}, "options": {"type": ["object", "null"]}},
     "required": ["items", "missing"]},
    {"type": "object"},
]
NOT_PLAIN = [
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
     "properties": {"n": {"type": "integer"}}},
    {"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}},
    {"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.1}}},
    {"type": "object", "properties": {"o": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
    {"type": "object", "properties": {"s": {"type": "string", "format": "date"}}},
    {"type": "object", "properties": {"t": {"type": "tuple"}}},
    {"type": "object", "properties": {"t": True}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "$defs": {}},
]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                  max_size=3),
                    max_leaves=8)


@settings(max_examples=1000, deadline=None)
@given(data=st.data(), schema=st.sampled_from(PLAIN))
def test_arguments_the_quick_check_passes_are_ones_jsonschema_passes(data, schema):
    names = st.sampled_from([*schema.get("properties", {}), *schema.get("required", []), "other"])
    arguments = data.draw(st.dictionaries(names, JSON, max_size=5))
    check = quick_check(schema)
    assert check is not None
    if check(arguments):
        assert jsonschema.Draft202012Validator(schema).is_valid(arguments)


@pytest.mark.parametrize("arguments", [
    {"n": 1.5}, {"n": 1.0}, {"n": True}, {"x": True}, {"x": "1"}, {"flag": 1}, {"any": object()},
    {"n": 1, "other": 1}, {"items": {}}, {"items": [], "missing": None, "options": []},
    {"items": (), "missing": 1}, {"items": [], "missing": 1, "options": None}])
def test_edge_cases_the_quick_check_passes_are_ones_jsonschema_passes(arguments):
    for schema in PLAIN:
        check = quick_check(schema)
        assert check is not None
        assert not check(arguments) or jsonschema.Draft202012Validator(schema).is_valid(arguments)


@pytest.mark.parametrize("schema", NOT_PLAIN)
def test_a_schema_outside_the_plain_subset_gets_no_quick_check(schema):
    assert quick_check(schema) is None


@pytest.mark.parametrize(("arguments", "passed"), [
    ({"text": "hi"}, True), ({"text": 1}, False), ({}, False), ({"text": "hi", "extra": 1}, True)])
def test_the_quick_check_of_a_plain_schema(arguments, passed):
    check = quick_check(PLAIN[0])
    assert check is not None
    assert check(arguments) is passed


def test_a_call_that_fits_a_plain_schema_skips_jsonschema_one_that_does_not_is_judged_by_it(
        tmp_path, monkeypatch):
    script = [reply(call("notes__echo", {"text": "a"}, 1), call("notes__echo", {"text": "b"}, 2),
                    call("notes__echo", {"text": 3}, 3)), "done"]
    agent, _ = agent_for(tmp_path, {"notes": stdio_entry("notes")},
                         policy_rules(("notes", "notes.*", "allow")), script)
    judged: list[Any] = []
    monkeypatch.setattr(tools, "problems", lambda validator, arguments: judged.append(arguments) or
                        problems(validator, arguments))
    try:
        out, events = run(agent, tmp_path)
    finally:
        close_sources(agent)
    assert told(out) == ["a", "b", "error: tool 'notes.echo': text: 3 is not of type 'string'"]
    assert judged == [{"text": 3}]  # only the call the quick check could not pass
    assert [event["outcome"] for event in of_phase(events, "tool")] == ["ok", "ok", "refused"]
