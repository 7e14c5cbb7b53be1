"""Core is its own first plugin: each built-in is real and resolvable by name."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc.config import load_config
from grapharc.harness.executors import LocalExecutor
from grapharc.models import BareModelSpecError, ModelSpecError, UnknownBackendError, get_model
from grapharc.planner.surface import registry_from_plugins
from grapharc.plugins import registry, resolve_factory
from grapharc.policy import PolicyContext, resolve_policy
from grapharc.stdlib import DEFAULT_POLICY, StdlibState
from grapharc.stores import StoreURIError, UnknownStoreSchemeError, open_store
from grapharc.testing import plugin_host

pytestmark = pytest.mark.smoke


STDLIB_KINDS = {"collect_context", "investigate", "verify", "summarize", "apply_change"}


@pytest.fixture(autouse=True)
def core_only():
    with plugin_host(installed=False) as host:
        yield host


def test_the_mock_backend_resolves_and_replies_from_its_script():
    model = get_model("mock/x", responses=["first", "second"])
    assert [model.invoke("a").content, model.invoke("b").content] == ["first", "second"]


def test_the_mock_backend_reports_usage_like_a_real_backend():
    reply = get_model("mock/x", responses=["four"]).invoke("a question")
    assert reply.usage_metadata["total_tokens"] == (
        reply.usage_metadata["input_tokens"] + reply.usage_metadata["output_tokens"]) > 0


def test_an_unknown_backend_prefix_lists_the_known_ones():
    with pytest.raises(UnknownBackendError, match=r"unknown model backend 'openrouterr'; known: mock"):
        get_model("openrouterr/x")


def test_a_bare_model_name_is_refused_with_a_suggestion_rather_than_sent_anywhere():
    with pytest.raises(BareModelSpecError) as caught:
        get_model("mock")
    assert "mock/<model>" in caught.value.hint


@pytest.mark.parametrize("spec", ["", "   ", "mock/", "/model", None, 42])
def test_malformed_specs_are_refused_clearly(spec):
    with pytest.raises(ModelSpecError):
        get_model(spec)


def test_memory_scheme_opens_the_in_process_claim_and_item_stores():
    assert type(open_store("memory:", kind="claims")).__name__ == "InMemoryClaimStore"
    assert type(open_store("memory:", kind="items")).__name__ == "InMemoryItemStore"
    with pytest.raises(StoreURIError, match="serves claims, items; say which kind"):
        open_store("memory:")


def test_sqlite_scheme_opens_a_durable_langgraph_checkpointer(tmp_path):
    saver = open_store(f"sqlite:{tmp_path}/state/checkpoints.db", kind="checkpoints").saver()
    assert isinstance(saver, SqliteSaver)
    assert (tmp_path / "state" / "checkpoints.db").is_file()


def test_an_unknown_store_scheme_lists_the_known_ones():
    with pytest.raises(UnknownStoreSchemeError,
                       match=r"unknown store scheme 'redis'; known: file, memory, sqlite"):
        open_store("redis://localhost")


@pytest.mark.parametrize("uri", ["no-colon", ":nothing", 7])
def test_malformed_store_uris_are_refused(uri):
    with pytest.raises(StoreURIError):
        open_store(uri)


def test_a_store_kind_the_scheme_does_not_serve_is_refused():
    with pytest.raises(StoreURIError, match="does not serve sessions"):
        open_store("memory:", kind="sessions")


def test_the_local_executor_is_registered_by_core():
    entry = registry("executors")["local"]
    executor = resolve_factory(entry.item.factory, plugin=entry.distribution)()
    assert isinstance(executor, LocalExecutor) and entry.distribution == "grapharc-core"


def test_the_stdlib_kinds_are_proposable_from_the_plugin_registry():
    kinds = registry_from_plugins().freeze()
    assert set(kinds.kinds()) == STDLIB_KINDS
    assert {entry.distribution for entry in registry("node_kinds").values()} == {"grapharc-core"}


def test_stdlib_bodies_write_only_their_declared_fields():
    state = StdlibState(goal="checkout outage")
    for spec in registry_from_plugins():
        delta = spec.factory(spec)(state)
        assert set(delta) <= spec.writes
        state = state.model_copy(update=delta)
    assert state.verified and "checkout outage" in state.summary


def test_the_registry_default_policy_denies_apply_change(tmp_path):
    loaded = resolve_policy(PolicyContext(registry_default=DEFAULT_POLICY))
    assert loaded.source == "registry-default"
    denied = [rule["kind"] for rule in loaded.document["rules"] if rule["action"] == "deny"]
    assert denied == ["apply_change"]


def test_a_policy_flag_beats_the_config_file_which_beats_the_registry_default(tmp_path):
    (tmp_path / "flag.toml").write_text('version = "flag"\n')
    (tmp_path / "conf.toml").write_text('version = "config"\n')
    (tmp_path / "grapharc.toml").write_text('[grapharc]\npolicy = "conf.toml"\n')

    def resolved(flags):
        config = load_config(flags, cwd=tmp_path, env={})
        return resolve_policy(PolicyContext(configured=config.setting("policy"),
                                            registry_default=DEFAULT_POLICY))

    assert resolved({"policy": "flag.toml"}).source == "flag"
    assert resolved({}).document["version"] == "config"
