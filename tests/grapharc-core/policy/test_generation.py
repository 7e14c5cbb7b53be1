"""Zero-config policy: generated once by a model, with a REVIEW THIS header, then read from disk."""

from __future__ import annotations

import pytest

from grapharc.config import Setting
from grapharc.policy import (
    GENERATED_PATH,
    PolicyContext,
    PolicyEngine,
    PolicyGenerationError,
    resolve_policy,
)
from grapharc.stdlib import DEFAULT_POLICY
from grapharc.testing import ScriptedChatModel, plugin_host

CATALOG = ({"kind": "investigate", "description": "look"},
           {"kind": "apply_change", "description": "act"})
DRAFT = """Here is a policy:
```toml
version = "generated-1"
description = "deny -> apply_change, otherwise allow"

[[rules]]
id = "deny-apply"
resource = "node"
action = "deny"
kind = "apply_change"
reason = "acts on the world"

[[rules]]
id = "allow-nodes"
resource = "node"
action = "allow"

[[rules]]
id = "allow-edges"
resource = "edge"
action = "allow"
```
"""


@pytest.fixture(autouse=True)
def core_only():
    with plugin_host(installed=False):
        yield


def context(tmp_path, model=None, **extra):
    return PolicyContext(registry_default=DEFAULT_POLICY, registry_name="plugins", model=model,
                         model_name="mock/drafter", workdir=tmp_path, catalog=CATALOG, **extra)


def test_with_no_model_and_nothing_named_the_registry_default_applies(tmp_path):
    assert resolve_policy(context(tmp_path)).source == "registry-default"
    assert not (tmp_path / GENERATED_PATH).exists()


def test_a_model_writes_a_policy_once_with_a_review_header(tmp_path):
    model = ScriptedChatModel(responses=[DRAFT])
    loaded = resolve_policy(context(tmp_path, model))
    assert (loaded.source, loaded.generated_now) == ("generated", True)
    text = (tmp_path / GENERATED_PATH).read_text()
    assert text.startswith("# REVIEW THIS") and "mock/drafter" in text
    engine = PolicyEngine.from_loaded(loaded)
    assert engine.node_policy().decide("apply_change").rule_id == "deny-apply"
    assert "apply_change" in model.calls[0][0].content


def test_the_second_run_reads_the_file_and_never_asks_the_model(tmp_path):
    resolve_policy(context(tmp_path, ScriptedChatModel(responses=[DRAFT])))
    exhausted = ScriptedChatModel(responses=[])
    loaded = resolve_policy(context(tmp_path, exhausted))
    assert (loaded.source, loaded.generated_now) == ("generated", False)
    assert exhausted.calls == []


def test_an_unusable_draft_is_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(PolicyGenerationError, match="unusable"):
        resolve_policy(context(tmp_path, ScriptedChatModel(responses=["allow everything!"])))
    assert not (tmp_path / GENERATED_PATH).exists()


def test_a_draft_naming_kinds_that_do_not_exist_is_refused(tmp_path):
    draft = DRAFT.replace('kind = "apply_change"', 'kind = "launch_missiles"')
    with pytest.raises(PolicyGenerationError, match="launch_missiles"):
        resolve_policy(context(tmp_path, ScriptedChatModel(responses=[draft])))


def test_a_named_policy_wins_over_generation(tmp_path):
    named = tmp_path / "mine.toml"
    named.write_text('version = "mine"\n')
    model = ScriptedChatModel(responses=[DRAFT])
    for layer, source in (("flag", "flag"), ("env", "env"), ("file", "config")):
        configured = Setting("policy", named, layer, "test")
        assert resolve_policy(context(tmp_path, model, configured=configured)).source == source
    assert model.calls == [] and not (tmp_path / GENERATED_PATH).exists()
