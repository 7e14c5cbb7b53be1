"""``grapharc policy check FILE``: a policy document judged as an agent would load it, running nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grapharc.errors import GraphARCError
from grapharc.harness.policy_check import PolicyPathError, check_policy
from grapharc.plugins import ToolSourceInfo, hookimpl
from grapharc.policy.engine import PolicyEngine
from grapharc.testing import in_process_source, plugin_host
from grapharc.testing.cli import run_cli

GOOD = '''version = "1"
description = "read anything, ask before writing, never the shell"

[[rules]]
id = "reads"
resource = "tool"
action = "allow"
tool = "read_file"

[[rules]]
id = "writes"
resource = "tool"
action = "ask"
tool = "write_*"
route = "ops"

[[rules]]
id = "no-deploy"
resource = "edge"
action = "deny"
target = "deploy"
tenant = "Acme"

[[rules]]
id = "cap"
resource = "spend"
action = "deny"
max_tokens = 5000
'''

BAD = '''version = "1"

[[rules]]
id = "reads"
resource = "tool"
action = "alow"
tool = "read_file"

[[rules]]
id = "writes"
resource = "tool"
action = "ask"
tools = "write_file"

[[rules]]
id = "reads"
resource = "node"
action = "deny"
'''


def check(path: Path, *flags: str) -> tuple[int, str, str]:
    result = run_cli(["policy", "check", str(path), *flags])
    return result.exit_code, result.stdout, result.stderr


def test_a_valid_document_lists_each_rule_and_what_it_covers(tmp_path):
    (tmp_path / "policy.toml").write_text(GOOD)
    code, out, _ = check(tmp_path / "policy.toml", "--json")
    document = json.loads(out)
    assert code == 0 and document["ok"] and document["valid"] and document["errors"] == []
    assert [(r["id"], r["action"], r["covers"], r["tenant"]) for r in document["rules"]] == [
        ("reads", "allow", "tool read_file", None), ("writes", "ask", "tool write_*", None),
        ("no-deploy", "deny", "edge * -> deploy", "acme"), ("cap", "deny", "spend over tokens 5000", None)]
    assert document["rules"][1]["route"] == "ops"
    assert any("no node rules" in note for note in document["notes"])
    code, text, _ = check(tmp_path / "policy.toml")
    assert code == 0
    assert text.splitlines()[:3] == [
        f"policy {tmp_path / 'policy.toml'}: valid, version 1: {GOOD.splitlines()[1][15:-1]}",
        "4 rule(s)", "  reads      allow  tool read_file"]


def test_every_error_is_named_with_its_rule_and_line_and_the_answer_is_no(tmp_path):
    (tmp_path / "bad.toml").write_text(BAD)
    code, out, _ = check(tmp_path / "bad.toml", "--json")
    document = json.loads(out)
    assert code == 1 and document["ok"] and not document["valid"]
    assert [(e["where"], e["rule_id"], e["line"]) for e in document["errors"]] == [
        ("rules[0].action", "reads", 3), ("rules[1].tools", "writes", 9), ("rules[2].id", "reads", 15)]
    assert "used twice" in document["errors"][2]["message"]
    code, text, _ = check(tmp_path / "bad.toml")
    assert code == 1
    assert "  rules[0].action (rule 'reads', line 3): Input should be 'deny', 'ask' or 'allow'" in text


def test_a_toml_mistake_names_its_line(tmp_path):
    (tmp_path / "broken.toml").write_text('version = "1"\n[[rules]\nid = "x"\n')
    code, out, _ = check(tmp_path / "broken.toml", "--json")
    error = json.loads(out)["errors"][0]
    assert code == 1 and error["where"] == "file" and "line 2" in error["message"]


@pytest.mark.parametrize(("content", "said"), [
    (b"\x7fELF\x02\x01\x01\x00\x00", "binary data"),
    (b'version = "\xff"\n', "not UTF-8"),
    (("a = " + "[" * 20000 + "]" * 20000 + "\n").encode(), "nests too deeply"),
    (('version = "1"\n[rules.a]\n' + "x = {" * 3000 + "}" * 3000 + "\n").encode(), ""),
])
def test_binary_undecodable_and_deeply_nested_files_are_invalid_not_a_crash(tmp_path, content, said):
    (tmp_path / "odd.toml").write_bytes(content)
    code, out, err = check(tmp_path / "odd.toml", "--json")
    assert code == 1, err
    errors = json.loads(out)["errors"]
    assert errors and said in errors[0]["message"]


@pytest.mark.parametrize("where", ["missing.toml", ".", "x" * 5000])
def test_a_path_that_is_no_file_could_not_be_checked(tmp_path, where):
    code, out, _ = check(tmp_path / where, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["code"] == "UsageError" and "'FILE'" in error["message"]


def test_a_name_no_file_can_have_is_refused_by_the_library_too(tmp_path):
    with pytest.raises(PolicyPathError, match="cannot check"):
        check_policy(tmp_path / "nul\x00.toml")


RESOURCES = st.sampled_from(["node", "edge", "tool", "spend", "tools", ""])
ACTIONS = st.sampled_from(["allow", "ask", "deny", "alow", ""])
IDS = st.sampled_from(["a", "b", "c", ""])
KEYS = st.sampled_from(["kind", "source", "target", "tool", "route", "tenant", "reason", "max_tokens",
                        "max_cost_usd", "colour"])
VALUES = st.one_of(st.text(max_size=8), st.integers(min_value=-2, max_value=10**6), st.booleans())


def toml_value(value: object) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = [] if draw(st.booleans()) and draw(st.booleans()) else [f"version = {toml_value(draw(IDS))}"]
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        lines += ["", "[[rules]]", f"id = {toml_value(draw(IDS))}",
                  f"resource = {toml_value(draw(RESOURCES))}", f"action = {toml_value(draw(ACTIONS))}"]
        extras = draw(st.dictionaries(KEYS, VALUES, max_size=3))
        lines += [f"{key} = {toml_value(value)}" for key, value in extras.items()]
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=documents())
def test_the_check_agrees_with_what_an_agent_would_load(tmp_path, text):
    path = tmp_path / "policy.toml"
    path.write_text(text)
    report = check_policy(path)
    try:
        PolicyEngine.from_file(path)
    except GraphARCError as exc:
        assert not report.valid
        assert all(error["message"] in str(exc) for error in report.problems[:10])
    else:
        assert report.valid and len(report.rules) == text.count("[[rules]]")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=200))
def test_any_bytes_get_a_verdict_never_a_crash(tmp_path, content):
    path = tmp_path / "policy.toml"
    path.write_bytes(content)
    report = check_policy(path)
    assert report.valid or all(error["message"] for error in report.problems)


class Things:
    @staticmethod
    @hookimpl
    def register_tool_sources(register):
        register(ToolSourceInfo(name="things", factory="nowhere:open"))


def test_a_table_whose_source_cannot_check_it_is_noted_and_a_table_no_source_reads_is_an_error(tmp_path):
    (tmp_path / "policy.toml").write_text(GOOD + "\n[things.servers.a]\nx = 1\n")
    with plugin_host(in_process_source(Things, name="things-source"), installed=False):
        noted = check_policy(tmp_path / "policy.toml")
    assert noted.valid and "[things] is read by things-source, which cannot check it without running it" \
        in noted.notes
    with plugin_host(installed=False):
        refused = check_policy(tmp_path / "policy.toml")
    assert [error["where"] for error in refused.problems] == ["things"]
