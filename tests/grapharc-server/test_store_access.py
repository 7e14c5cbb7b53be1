"""The store grants of the auth file: which namespaces a user reads and writes, and how a search or
listing under a wider prefix is narrowed to them (grapharc.server.service.store_access)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grapharc.server.auth import User, load_auth
from grapharc.server.errors import AuthFileError
from grapharc.server.grants import EVERYONE_DEFAULT, Rights
from grapharc.server.service.store_access import granted, may_use, scoped_prefixes


def _user(*store: str, name: str = "alice", tenant: str | None = "acme") -> User:
    return User(name, Rights(store=store), tenant)


def test_everyone_uses_the_namespaces_under_their_own_name_by_default() -> None:
    alice = User("alice", EVERYONE_DEFAULT)
    assert granted(alice) == (("alice",),)
    assert may_use(alice, ("alice",)) and may_use(alice, ("alice", "notes", "2026"))
    assert not may_use(alice, ("bob", "notes")) and not may_use(alice, ("alice-2",))


def test_placeholders_fill_whole_labels_and_a_name_with_a_period_is_never_split() -> None:
    assert granted(_user("{tenant}.docs", "shared")) == (("acme", "docs"), ("shared",))
    assert granted(_user("{tenant}.docs", tenant=None)) == ()
    dotted = User("a.b", EVERYONE_DEFAULT)
    assert granted(dotted) == (("a.b",),)
    assert not may_use(dotted, ("a", "b"))


def test_the_star_grant_covers_every_namespace_and_no_user_means_a_loopback_server() -> None:
    assert granted(_user("*")) is None
    assert may_use(_user("*"), ("anyone", "at", "all"))
    assert may_use(None, ("anyone",)) and scoped_prefixes(None, ()) == [()]


def test_a_wider_prefix_is_narrowed_to_each_grant_inside_it() -> None:
    alice = _user("{user}", "shared.docs", "shared")
    assert scoped_prefixes(alice, ()) == [("alice",), ("shared",)]  # shared.docs is inside shared
    assert scoped_prefixes(alice, ("shared",)) == [("shared",)]
    assert scoped_prefixes(alice, ("alice", "notes")) == [("alice", "notes")]
    assert scoped_prefixes(alice, ("bob",)) == []


def test_a_wildcard_label_in_the_asked_prefix_never_reaches_past_a_grant() -> None:
    alice = _user("{user}")
    assert scoped_prefixes(alice, ("*", "notes")) == [("alice", "notes")]
    assert scoped_prefixes(alice, ("*",)) == [("alice",)]
    assert scoped_prefixes(_user("team.{user}"), ("team", "*", "x")) == [("team", "alice", "x")]
    assert scoped_prefixes(_user("team.{user}"), ("other", "*")) == []


def test_the_auth_file_grants_store_prefixes_by_role(tmp_path: Path) -> None:
    path = tmp_path / "auth.toml"
    path.write_text('[roles.librarian]\nstore = ["library", "{tenant}.docs"]\n\n[users.alice]\n'
                    'tenant = "acme"\nroles = ["librarian"]\n\n[users.bob]\n', encoding="utf-8")
    auth = load_auth(path)
    assert granted(auth.users["alice"]) == (("alice",), ("library",), ("acme", "docs"))
    assert granted(auth.users["bob"]) == (("bob",),)


@pytest.mark.parametrize(("grant", "says"), [
    ('"notes"', "roles.everyone.store must be a list of non-empty strings; got 'notes'"),
    ('["a..b"]', "roles.everyone.store has 'a..b', which is not a namespace prefix"),
    ('["{owner}"]', "roles.everyone.store has '{owner}', which is not a namespace prefix"),
    ('["x{user}"]', "roles.everyone.store has 'x{user}', which is not a namespace prefix"),
])
def test_a_store_grant_that_is_not_a_namespace_prefix_is_refused_naming_it(tmp_path: Path, grant: str,
                                                                           says: str) -> None:
    path = tmp_path / "auth.toml"
    path.write_text(f"[roles.everyone]\nstore = {grant}\n\n[users.alice]\n", encoding="utf-8")
    with pytest.raises(AuthFileError, match=re.escape(says)):
        load_auth(path)
