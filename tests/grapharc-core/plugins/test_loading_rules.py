"""Discovery and loading: a broken plugin is reported and skipped, never fatal."""

from __future__ import annotations

import types

import pytest

from grapharc import __version__
from grapharc.models import get_model, resolve_backend
from grapharc.plugins import (
    BackendInfo,
    DuplicateRegistrationError,
    ExecutorInfo,
    PluginError,
    PluginFactoryError,
    PluginFailedError,
    PluginHost,
    PluginSource,
    StoreInfo,
    hookimpl,
    resolve_factory,
)
from grapharc.plugins.host import core_requirement
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

    return PluginSource(name, "1.0", "broken_dist.hooks", load, requires=f"=={__version__}")


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


def test_a_plugin_whose_core_range_excludes_this_core_is_reported_incompatible_and_never_imported():
    imported = []
    source = in_process_source(backend_plugin("future"), name="future-dist", core_requires=">=99")
    source = PluginSource(source.distribution, source.version, source.module,
                          lambda: imported.append(True), source.requires)
    with plugin_host(source, installed=False) as host:
        record = host.records["future-dist"]
        assert record.status == "incompatible"
        assert ">=99" in record.errors[0]
        assert "future" not in host.registry("model_backends")
    assert imported == []


def test_a_plugin_that_declares_no_supported_core_versions_is_not_loaded():
    with plugin_host(in_process_source(backend_plugin("vague"), name="vague-dist",
                                       core_requires=None), installed=False) as host:
        assert host.records["vague-dist"].status == "incompatible"
        assert "list grapharc-core in its dependencies" in host.records["vague-dist"].errors[0]


@pytest.mark.parametrize(("requires", "expected"), [
    (["fastapi>=0.110", "grapharc-core==0.1.0"], "==0.1.0"),
    (["grapharc_core>=0.1,<0.2"], ">=0.1,<0.2"),
    (["Grapharc.Core[otel] (>=0.1)"], ">=0.1"),
    (["grapharc-core>=99; extra == 'future'", "grapharc-core>=0.1"], ">=0.1"),
    (["grapharc-core"], ""),
    (["grapharc-core-extras>=1", "fastapi", "not a requirement !"], None),
])
def test_a_plugins_core_range_is_its_grapharc_core_dependency(requires, expected):
    assert core_requirement(requires) == expected


def test_strict_mode_raises_a_plugin_error_naming_the_plugin_that_failed_to_import():
    with pytest.raises(PluginFailedError, match="broken-dist: could not load") as caught, \
            plugin_host(broken_import_source(), installed=False, strict=True):
        pass
    assert isinstance(caught.value.__cause__, ImportError)


def test_strict_mode_raises_a_hook_failure_naming_the_plugin_when_the_registry_is_filled():
    with plugin_host(in_process_source(raising_plugin(), name="raiser"), installed=False,
                     strict=True) as host, pytest.raises(PluginFailedError, match=r"raiser: .*own bug"):
        host.registry("model_backends")


def test_a_plugin_registering_one_name_twice_fails_and_keeps_none_of_that_hooks_items():
    @hookimpl
    def register_model_backends(register):
        for prefix in ("twice-a", "twice", "twice"):
            register(BackendInfo(prefix=prefix, factory="x:y", vendor="test"))

    plugin = types.SimpleNamespace(register_model_backends=register_model_backends)
    with plugin_host(in_process_source(plugin, name="stutter"), installed=False) as host:
        assert sorted(host.registry("model_backends")) == ["mock"]
        assert host.records["stutter"].status == "failed"
        assert "model backend 'twice' twice" in host.records["stutter"].errors[0]


def test_a_backend_prefix_core_registers_stays_cores_and_the_plugin_shows_conflict():
    with plugin_host(in_process_source(backend_plugin("mock"), name="impostor-dist"),
                     installed=False) as host:
        assert host.registry("model_backends")["mock"].distribution == "grapharc-core"
        record = host.records["impostor-dist"]
        assert record.status == "conflict"
        assert "grapharc-core" in record.errors[0] and "impostor-dist" in record.errors[0]


def test_two_distributions_claiming_one_store_scheme_for_one_kind_is_a_conflict_core_wins():
    @hookimpl
    def register_stores(register):
        register(StoreInfo(scheme="memory", kinds=frozenset({"claims"}),
                           factory="grapharc.memory.inprocess:open_inprocess_store"))

    plugin = types.SimpleNamespace(register_stores=register_stores)
    with plugin_host(in_process_source(plugin, name="other-memory"), installed=False) as host:
        assert host.registry("stores")["memory:claims"].distribution == "grapharc-core"
        assert host.records["other-memory"].status == "conflict"
    with plugin_host(in_process_source(plugin, name="other-memory"), installed=False,
                     strict=True) as host, \
            pytest.raises(DuplicateRegistrationError, match="grapharc-core and other-memory"):
        host.registry("stores")


def test_one_scheme_may_serve_different_kinds_from_different_distributions():
    @hookimpl
    def register_stores(register):
        register(StoreInfo(scheme="sqlite", kinds=frozenset({"artifacts"}),
                           factory="grapharc.sqlite.checkpoints:open_sqlite_checkpointer"))

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


def test_a_plugin_implementing_one_hook_twice_through_specname_gets_both_registrations():
    @hookimpl(specname="register_executors")
    def register_first(register):
        register(ExecutorInfo(name="first", factory="grapharc.harness.executors:create_local_executor"))

    @hookimpl(specname="register_executors")
    def register_second(register):
        register(ExecutorInfo(name="second", factory="grapharc.harness.executors:create_local_executor"))

    plugin = types.SimpleNamespace(register_first=register_first, register_second=register_second)
    with plugin_host(in_process_source(plugin, name="two-executors"), installed=False) as host:
        executors = host.registry("executors")
        assert {executors[name].distribution for name in ("first", "second")} == {"two-executors"}
        assert sorted(host.records["two-executors"].registered["executors"]) == ["first", "second"]


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


@pytest.mark.parametrize("factory", ["no_colon", "grapharc.no_such_module:thing",
                                     "grapharc.harness.executors:no_such_attr",
                                     "grapharc.plugins.types:STORE_KINDS", 42])
def test_a_factory_that_cannot_be_resolved_is_a_plugin_error_naming_the_plugin(factory):
    with pytest.raises(PluginFactoryError, match=r"^my-dist"):
        resolve_factory(factory, plugin="my-dist")


def test_a_backend_whose_factory_is_missing_names_its_distribution_when_used():
    @hookimpl
    def register_model_backends(register):
        register(BackendInfo(prefix="gone", factory="gone_package.models:build", vendor="test"))

    plugin = types.SimpleNamespace(register_model_backends=register_model_backends)
    with plugin_host(in_process_source(plugin, name="gone-dist"), installed=False), \
            pytest.raises(PluginFactoryError, match=r"gone-dist's factory 'gone_package\.models:build'"):
        get_model("gone/x")


def test_a_core_whose_hook_module_cannot_load_is_an_error_even_outside_strict_mode():
    def load():
        raise ModuleNotFoundError("No module named 'grapharc.plugins.builtin'")

    stale = PluginSource("grapharc-core", __version__, "grapharc.plugins.builtin", load)
    with pytest.raises(PluginFailedError, match=r"grapharc-core: could not load grapharc\.plugins\.builtin"):
        PluginHost([stale])
