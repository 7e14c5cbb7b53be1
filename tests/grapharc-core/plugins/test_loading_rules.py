"""Discovery and loading: a broken plugin is reported and skipped, never fatal."""

from __future__ import annotations

import types

import pytest

from grapharc.models import get_model, resolve_backend
from grapharc.plugins import (
    BackendInfo,
    DuplicateRegistrationError,
    PluginError,
    PluginSource,
    StoreInfo,
    hookimpl,
)
from grapharc.testing import in_process_source, plugin_host

pytestmark = pytest.mark.smoke


def backend_plugin(prefix: str) -> types.SimpleNamespace:
    @hookimpl
    def register_model_backends(register):
        register(BackendInfo(prefix=prefix, factory="grapharc.models.scripted:create_scripted_model",
                             vendor="test"))

    return types.SimpleNamespace(register_model_backends=register_model_backends)


def raising_plugin() -> types.SimpleNamespace:
    @hookimpl
    def register_model_backends(register):
        raise RuntimeError("the plugin's own bug")

    return types.SimpleNamespace(register_model_backends=register_model_backends)


def broken_import_source(name: str = "broken-dist") -> PluginSource:
    def load():
        raise ImportError("No module named 'missing_dependency'")

    return PluginSource(name, "1.0", "broken_dist.hooks", load)


def test_a_plugin_whose_module_fails_to_import_is_reported_and_the_rest_keep_working():
    with plugin_host(broken_import_source(), in_process_source(backend_plugin("extra"), name="ok-dist"),
                     installed=False) as host:
        record = host.records["broken-dist"]
        assert record.status == "failed"
        assert "missing_dependency" in record.errors[0]
        assert resolve_backend("extra/model").distribution == "ok-dist"
        assert resolve_backend("mock/x").distribution == "grapharc-core"


def test_a_plugin_whose_hook_raises_is_reported_and_its_registrations_are_dropped():
    with plugin_host(in_process_source(raising_plugin(), name="raiser"),
                     in_process_source(backend_plugin("fine"), name="fine-dist"),
                     installed=False) as host:
        backends = host.registry("model_backends")
        assert "fine" in backends and "mock" in backends
        record = host.records["raiser"]
        assert record.status == "failed"
        assert "register_model_backends raised RuntimeError: the plugin's own bug" in record.errors[0]


def test_a_plugin_that_excludes_this_core_version_is_reported_incompatible_and_not_loaded():
    plugin = backend_plugin("future")
    plugin.GRAPHARC_CORE_REQUIRES = ">=99"
    with plugin_host(in_process_source(plugin, name="future-dist"), installed=False) as host:
        record = host.records["future-dist"]
        assert record.status == "incompatible"
        assert ">=99" in record.errors[0]
        assert "future" not in host.registry("model_backends")


def test_a_plugin_that_declares_no_supported_core_versions_is_not_loaded():
    with plugin_host(in_process_source(backend_plugin("vague"), name="vague-dist",
                                       core_requires=None), installed=False) as host:
        assert host.records["vague-dist"].status == "incompatible"
        assert "GRAPHARC_CORE_REQUIRES" in host.records["vague-dist"].errors[0]


def test_strict_mode_re_raises_the_plugins_own_error():
    with pytest.raises(ImportError, match="missing_dependency"), \
            plugin_host(broken_import_source(), installed=False, strict=True):
        pass


def test_strict_mode_re_raises_a_hook_failure_when_the_registry_is_filled():
    with plugin_host(in_process_source(raising_plugin(), name="raiser"), installed=False,
                     strict=True) as host, pytest.raises(RuntimeError, match="own bug"):
        host.registry("model_backends")


def test_two_distributions_registering_one_backend_prefix_is_an_error_naming_both():
    with plugin_host(in_process_source(backend_plugin("mock"), name="impostor-dist"),
                     installed=False) as host:
        with pytest.raises(DuplicateRegistrationError) as caught:
            host.registry("model_backends")
        assert "grapharc-core" in str(caught.value) and "impostor-dist" in str(caught.value)


def test_two_distributions_claiming_one_store_scheme_for_one_kind_is_an_error():
    @hookimpl
    def register_stores(register):
        register(StoreInfo(scheme="memory", kinds=frozenset({"claims"}),
                           factory="grapharc.memory.inprocess:open_inprocess_store"))

    plugin = types.SimpleNamespace(register_stores=register_stores)
    with plugin_host(in_process_source(plugin, name="other-memory"), installed=False) as host, \
            pytest.raises(DuplicateRegistrationError, match="other-memory"):
        host.registry("stores")


def test_one_scheme_may_serve_different_kinds_from_different_distributions():
    @hookimpl
    def register_stores(register):
        register(StoreInfo(scheme="sqlite", kinds=frozenset({"artifacts"}),
                           factory="grapharc.checkpoints:open_sqlite_checkpointer"))

    plugin = types.SimpleNamespace(register_stores=register_stores)
    with plugin_host(in_process_source(plugin, name="artifact-dist"), installed=False) as host:
        stores = host.registry("stores")
        assert stores["sqlite:checkpoints"].distribution == "grapharc-core"
        assert stores["sqlite:artifacts"].distribution == "artifact-dist"


def test_registering_the_wrong_kind_of_object_fails_that_plugin_with_a_clear_message():
    @hookimpl
    def register_executors(register):
        register({"name": "dict-executor"})

    plugin = types.SimpleNamespace(register_executors=register_executors)
    with plugin_host(in_process_source(plugin, name="sloppy"), installed=False) as host:
        assert "local" in host.registry("executors")
        assert host.records["sloppy"].status == "failed"
        assert "expected grapharc.plugins.types.ExecutorInfo" in host.records["sloppy"].errors[0]


def test_a_hook_module_implementing_an_unknown_hook_is_refused():
    @hookimpl
    def register_widgets(register):
        register("widget")

    plugin = types.SimpleNamespace(register_widgets=register_widgets)
    with plugin_host(in_process_source(plugin, name="typo-dist"), installed=False) as host:
        assert host.records["typo-dist"].status == "failed"
        assert "register_widgets" in host.records["typo-dist"].errors[0]
        assert host.loaded() == ["grapharc-core"]


def test_the_load_filter_disables_distributions_it_does_not_name():
    with plugin_host(in_process_source(backend_plugin("a"), name="dist-a"),
                     in_process_source(backend_plugin("b"), name="dist-b"),
                     installed=False, allowed={"dist-b"}) as host:
        assert host.records["dist-a"].status == "disabled"
        assert sorted(host.registry("model_backends")) == ["b", "mock"]


def test_an_empty_load_filter_keeps_only_core():
    with plugin_host(in_process_source(backend_plugin("a"), name="dist-a"), installed=True,
                     allowed=set()) as host:
        assert host.loaded() == ["grapharc-core"]


def test_registries_are_filled_lazily_one_hook_at_a_time():
    calls = []

    @hookimpl
    def register_tools(register):
        calls.append("tools")

    plugin = types.SimpleNamespace(register_tools=register_tools)
    with plugin_host(in_process_source(plugin, name="lazy-dist"), installed=False) as host:
        host.registry("model_backends")
        assert calls == []
        host.registry("tools")
        host.registry("tools")
        assert calls == ["tools"]


def test_an_in_process_backend_builds_a_working_model():
    with plugin_host(in_process_source(backend_plugin("canned"), name="canned-dist"),
                     installed=False):
        model = get_model("canned/anything", responses=["scripted answer"])
        assert model.invoke("question").content == "scripted answer"


def test_plugin_error_is_a_grapharc_error_with_a_code():
    error = PluginError("x")
    assert error.code == "PluginError"
