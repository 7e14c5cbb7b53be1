"""Bad policy documents are refused with the file, rule and key named; nothing is guessed."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grapharc.policy import PolicyDocumentError, PolicyEngine, PolicyLoadError


def load(tmp_path, text: str | bytes) -> PolicyEngine:
    path = tmp_path / "policy.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return PolicyEngine.from_file(path)


def test_bad_toml_names_the_file_line_and_column(tmp_path):
    with pytest.raises(PolicyLoadError, match=r"policy.toml is not valid TOML: .*line 2"):
        load(tmp_path, 'version = "1"\nthis is not toml\n')


def test_a_rule_naming_an_unknown_resource_is_refused_with_its_location(tmp_path):
    text = ('version = "1"\n[[rules]]\nid = "ok"\nresource = "node"\naction = "allow"\n'
            '[[rules]]\nid = "mystery"\nresource = "network"\naction = "deny"\n')
    with pytest.raises(PolicyDocumentError) as caught:
        load(tmp_path, text)
    message = str(caught.value)
    assert "policy.toml: rules[1] (rule 'mystery')" in message and "'network'" in message


@pytest.mark.parametrize(("rule", "message"), [
    ('resource = "edge"\naction = "maybe"', r"rules\[0\].action"),
    ('resource = "edge"\naction = "deny"\ntargte = "x"', r"rules\[0\].targte \(rule 'r'\): Extra inputs"),
    ('resource = "spend"\naction = "deny"', "sets no max_tokens"),
    ('resource = "spend"\naction = "allow"\nmax_tokens = 5', r"rules\[0\].action"),
    ('resource = "spend"\naction = "deny"\nmax_tokens = -1', "greater than 0"),
    ('resource = "spend"\naction = "deny"\nmax_tokens = 1e400', "max_tokens"),
])
def test_malformed_rules_are_refused_naming_the_key(tmp_path, rule, message):
    with pytest.raises(PolicyDocumentError, match=message):
        load(tmp_path, f'version = "1"\n[[rules]]\nid = "r"\n{rule}\n')


def test_duplicate_rule_ids_and_a_missing_version_are_refused(tmp_path):
    with pytest.raises(PolicyDocumentError, match="used twice"):
        load(tmp_path, 'version = "1"\n' + '[[rules]]\nid = "a"\nresource = "node"\n'
             'action = "allow"\n' * 2)
    with pytest.raises(PolicyDocumentError, match="version: Field required"):
        load(tmp_path, "rules = []\n")


def test_binary_files_and_directories_are_refused(tmp_path):
    with pytest.raises(PolicyLoadError, match="binary"):
        load(tmp_path, b"\x00\x01\x02")
    with pytest.raises(PolicyLoadError, match="is a directory"):
        PolicyEngine.from_file(tmp_path)
    with pytest.raises(PolicyLoadError, match="cannot read"):
        PolicyEngine.from_file(tmp_path / "missing.toml")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_load_or_raise_a_policy_error(data):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.toml"
        path.write_bytes(data)
        with contextlib.suppress(PolicyLoadError, PolicyDocumentError):
            PolicyEngine.from_file(path)


rule_values = st.one_of(st.text(max_size=10), st.integers(), st.floats(allow_nan=False),
                        st.booleans(), st.sampled_from(["node", "edge", "tool", "spend", "deny",
                                                        "ask", "allow", "*"]))
rules = st.dictionaries(st.sampled_from(["id", "resource", "action", "kind", "source", "target",
                                         "tool", "tenant", "max_tokens", "reason", "zzz"]),
                        rule_values, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({"version": rule_values}, optional={"rules": st.lists(rules,
                                                                                  max_size=4)}))
def test_any_document_shape_validates_or_raises_a_document_error(document):
    with contextlib.suppress(PolicyDocumentError):
        PolicyEngine(document)
