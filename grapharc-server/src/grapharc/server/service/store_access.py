"""Which namespaces of the long-term store a user may read and write, from the auth file's store grants.

A grant (``grants.Rights.store``) is a namespace prefix written as labels joined by ``.``, each
literal or a whole ``{user}`` (the user's name) or ``{tenant}`` (their tenant; a user without one
gets nothing from such a grant), or ``*`` alone for every namespace. A user uses a namespace when
one of their grants is a prefix of it, label by label: ``{user}`` is never split on a period, so
a user named ``a.b`` cannot reach ``("a", "b")``. A search or a listing under a prefix wider than
their grants (``()``, every namespace) is narrowed to each grant inside it; a ``*`` label in the
asked prefix (a wildcard to LangGraph's stores) is narrowed to the grant's label at that place. A
server without an auth file (loopback only) has no users: ``None`` uses every namespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.server.grants import ALL_NAMESPACES

if TYPE_CHECKING:
    from grapharc.server.auth import User

Namespace = tuple[str, ...]

WILDCARD = "*"
"""A label of a search or listing prefix that LangGraph's stores match against any label."""


def granted(user: User) -> tuple[Namespace, ...] | None:
    """The namespace prefixes ``user`` may use, their placeholders filled in (None: every namespace)."""
    prefixes: list[Namespace] = []
    for grant in user.rights.store:
        if grant == ALL_NAMESPACES:
            return None
        labels = [_filled(label, user) for label in grant.split(".")]
        if all(label is not None for label in labels):
            prefixes.append(tuple(label for label in labels if label is not None))
    return tuple(dict.fromkeys(prefixes))


def _filled(label: str, user: User) -> str | None:
    """``label`` of a grant with its placeholder filled in for ``user`` (None: they have no tenant)."""
    if label == "{user}":
        return user.name
    if label == "{tenant}":
        return user.tenant
    return label


def may_use(user: User | None, namespace: Namespace) -> bool:
    """Whether ``user`` may read and write the items of ``namespace`` (its labels taken literally)."""
    if user is None:
        return True
    prefixes = granted(user)
    return prefixes is None or any(namespace[:len(prefix)] == prefix for prefix in prefixes)


def scoped_prefixes(user: User | None, prefix: Namespace) -> list[Namespace]:
    """The prefixes to search or list under for ``user`` asking for ``prefix``: ``[prefix]`` when
    all of it is theirs, else the part of it each grant covers (none: nothing under it is theirs)."""
    if user is None:
        return [prefix]
    prefixes = granted(user)
    if prefixes is None:
        return [prefix]
    meets = [met for grant in prefixes if (met := _meet(prefix, grant)) is not None]
    return [met for met in dict.fromkeys(meets)
            if not any(other != met and _under(met, other) for other in meets)]


def _meet(asked: Namespace, grant: Namespace) -> Namespace | None:
    """The namespaces both under ``asked`` (``*`` labels matching any label) and under ``grant``, as
    one prefix; None when they share none."""
    for place, label in enumerate(grant[:len(asked)]):
        if asked[place] not in (label, WILDCARD):
            return None
    return grant + asked[len(grant):] if len(asked) > len(grant) else grant


def _under(namespace: Namespace, prefix: Namespace) -> bool:
    """Whether every namespace under ``namespace`` is under ``prefix`` too."""
    return len(namespace) >= len(prefix) and all(
        label in (namespace[place], WILDCARD) for place, label in enumerate(prefix))


def grants_named(user: User) -> str:
    """``user``'s store grants as a refusal names them."""
    prefixes = granted(user)
    if prefixes is None:
        return "every namespace"
    return ", ".join(".".join(prefix) for prefix in prefixes) or "none"
