"""The session layer opens its stores by URI through the stores hook: ``sqlite:DIR``, a bare directory
(the scheme registered as the local default), or any scheme a plugin registers for both kinds."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path

import pytest
from session_graphs import register_all

from grapharc.plugins import StoreInfo, hookimpl
from grapharc.session import CheckpointerProvider, SessionManager, SessionStore, SessionStoreError
from grapharc.session.retention import weight
from grapharc.sqlite.checkpoints import SqliteCheckpoints, open_sqlite_checkpointer
from grapharc.sqlite.sessions import open_session_store
from grapharc.stores import StoreURIError, store_uri
from grapharc.testing import in_process_source, plugin_host


def stores_plugin(*infos: StoreInfo) -> types.SimpleNamespace:
    """An in-process plugin registering ``infos`` through the stores hook."""

    @hookimpl
    def register_stores(register):
        for info in infos:
            register(info)

    return types.SimpleNamespace(register_stores=register_stores)


def approved_once(manager: SessionManager) -> str:
    """Register the test graphs and run an interview thread to its hold; the hold's approval id."""
    register_all(manager)
    paused = manager.start("interview", thread_id="t1")
    assert paused.status == "paused"
    return paused.holds[0].approval_id


def test_a_sqlite_uri_lays_the_layer_out_as_two_files_in_one_directory(tmp_path):
    manager = SessionManager(f"sqlite:{tmp_path}/layer", lease_seconds=5.0)
    assert isinstance(manager.store, SessionStore) and isinstance(manager.checkpoints, CheckpointerProvider)
    approval = approved_once(manager)
    manager.close()
    assert sorted(p.name for p in (tmp_path / "layer").glob("*.db")) == ["checkpoints.db", "sessions.db"]

    bare = SessionManager(tmp_path / "layer", lease_seconds=5.0)
    register_all(bare)
    assert bare.approve("t1", approval, decider="ana").outcome == "prepare,ask:approved,pay"
    bare.close()


def test_a_scheme_a_plugin_registers_for_both_kinds_serves_every_session(tmp_path):
    opened: list[tuple[str, str]] = []

    def sessions(location, kind):
        opened.append((location, kind))
        return open_session_store(location, kind)

    class Checkpoints(SqliteCheckpoints):
        def async_saver(self):
            opened.append((str(self.path.parent), "async saver"))
            return super().async_saver()

    def checkpoints(location, kind):
        opened.append((location, kind))
        return Checkpoints(open_sqlite_checkpointer(location, kind).path)

    plugin = stores_plugin(StoreInfo(scheme="vault", kinds=frozenset({"sessions"}), factory=sessions),
                           StoreInfo(scheme="vault", kinds=frozenset({"checkpoints"}), factory=checkpoints))
    with plugin_host(in_process_source(plugin, name="vault-dist"), installed=False):
        manager = SessionManager(f"vault:{tmp_path}/vaulted", lease_seconds=5.0)
        approval = approved_once(manager)

        async def resume():
            done = await manager.aresume("t1", approval, "approved", decider="ana")
            await manager.aclose()
            return done

        assert asyncio.run(resume()).status == "completed"
    location = f"{tmp_path}/vaulted"
    assert opened == [(location, "sessions"), (location, "checkpoints"), (location, "async saver")]


def test_a_location_naming_one_file_keeps_both_stores_in_it_and_weighs_it_once(tmp_path):
    manager = SessionManager(f"sqlite:{tmp_path}/one.db", lease_seconds=5.0)
    approval = approved_once(manager)
    manager.approve("t1", approval, decider="ana")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.db", "one.db-shm", "one.db-wal"]
    assert weight(manager.store, manager.checkpoints) == sum(manager.store.footprint().values())
    assert manager.prune(0).removed == ("t1",)
    manager.close()


def test_a_bare_path_means_the_scheme_registered_as_the_local_default():
    assert store_uri(Path("runs/sessions"), "sessions") == "sqlite:runs/sessions"
    assert store_uri("runs/sessions", "checkpoints") == "sqlite:runs/sessions"
    assert store_uri(Path("odd:name"), "sessions") == "sqlite:odd:name"
    assert store_uri("elsewhere://host/db", "sessions") == "elsewhere://host/db"
    assert store_uri("runs/claims.db", "claims") == "sqlite:runs/claims.db"  # grapharc-memory-sqlite's
    with pytest.raises(StoreURIError, match="no installed store serves artifacts at a bare path"):
        store_uri("runs/claims.db", "artifacts")


def test_two_local_defaults_for_one_kind_are_refused_naming_both(tmp_path):
    plugin = stores_plugin(StoreInfo(scheme="rival", kinds=frozenset({"sessions"}),
                                     factory=open_session_store, local_default=True))
    with plugin_host(in_process_source(plugin, name="rival-dist"), installed=False), \
            pytest.raises(StoreURIError, match=r"rival \(rival-dist\), sqlite \(grapharc-core\)"):
        SessionManager(tmp_path / "sessions")
    assert not (tmp_path / "sessions").exists()


def test_a_scheme_whose_factory_returns_no_session_store_is_refused(tmp_path):
    plugin = stores_plugin(StoreInfo(scheme="bogus", kinds=frozenset({"sessions", "checkpoints"}),
                                     factory=lambda location, kind: object()))
    with plugin_host(in_process_source(plugin, name="bogus-dist"), installed=False), \
            pytest.raises(SessionStoreError, match="for bogus:x is 'object', which is not a SessionStore"):
        SessionManager("bogus:x")


def test_the_session_store_is_closed_again_when_the_checkpoints_cannot_open(tmp_path):
    closed: list[str] = []

    def sessions(location, kind):
        store = open_session_store(location, kind)
        store.close = lambda: closed.append(location)
        return store

    plugin = stores_plugin(StoreInfo(scheme="half", kinds=frozenset({"sessions"}), factory=sessions))
    with plugin_host(in_process_source(plugin, name="half-dist"), installed=False), \
            pytest.raises(StoreURIError, match="scheme 'half' does not serve checkpoints"):
        SessionManager(f"half:{tmp_path}/half")
    assert closed == [f"{tmp_path}/half"]
