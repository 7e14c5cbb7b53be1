"""What a user may do, granted by the roles of the auth file: run assistants, read and delete threads,
decide approvals, use the long-term store under some namespace prefixes.

A role is a table of grants (``[roles.NAME]``); a user names the roles they have. Every user also
has the role ``everyone``, which lets them run every assistant, read and delete the threads they
created and read and write the store under their own user name (``store = ["{user}"]``, see
``grapharc.server.service.store_access``) unless the file writes ``[roles.everyone]`` otherwise (a
key it leaves out keeps that default). Any other role grants only what it writes. A user's rights
are the union of their roles'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from grapharc.server.errors import AuthFileError

EVERYONE = "everyone"
"""The role every user has."""
ALL_NAMESPACES = "*"
"""The store grant that covers every namespace."""
PLACEHOLDERS = ("{user}", "{tenant}")
"""What a store grant's label may stand for: the user's name, their tenant."""


class Scope(IntEnum):
    """Which threads a right covers; each covers what the ones below it do."""

    NONE = 0
    OWN = 1
    """The threads the user created."""
    TENANT = 2
    """Those, and the threads created by any user of the same tenant."""
    ALL = 3
    """Every thread, those with no owner (created before owners were recorded, or by the CLI) too."""

    @property
    def word(self) -> str:
        """The word the auth file writes for it."""
        return self.name.lower()


READ_SCOPES = (Scope.OWN, Scope.TENANT, Scope.ALL)
"""What ``read`` may say: a user always reads the threads they created."""
DELETE_SCOPES = (Scope.NONE, Scope.OWN, Scope.TENANT, Scope.ALL)


@dataclass(frozen=True, slots=True)
class Rights:
    """The grants of a role, or a user's all together."""

    run: tuple[str, ...] = ()
    """Globs of the assistants (registered graphs) they may run: create threads, start runs."""
    read: Scope = Scope.OWN
    delete: Scope = Scope.NONE
    decide: tuple[str, ...] = ()
    """``graph/node`` globs of the approvals they may decide."""
    decides_for: tuple[str, ...] = ()
    """Deciders an approval may name that they answer for (their roles' names among them)."""
    store: tuple[str, ...] = ()
    """Namespace prefixes of the long-term store they may read and write, labels joined by ``.``
    (``{user}`` and ``{tenant}`` stand for whole labels; ``*`` alone: every namespace)."""

    def joined(self, other: Rights) -> Rights:
        """The rights of someone who has both these and ``other``."""
        return Rights(_union(self.run, other.run), max(self.read, other.read), max(self.delete, other.delete),
                      _union(self.decide, other.decide), _union(self.decides_for, other.decides_for),
                      _union(self.store, other.store))


EVERYONE_DEFAULT = Rights(run=("*",), read=Scope.OWN, delete=Scope.OWN, store=("{user}",))
"""What ``everyone`` grants unless the auth file writes otherwise."""

ROLE_KEYS = ("run", "read", "delete", "decide", "store")


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    """Both lists' names, each once, in the order first seen."""
    return tuple(dict.fromkeys((*first, *second)))


def parse_roles(path: object, table: dict[str, Any]) -> dict[str, Rights]:
    """The ``[roles]`` of the auth file at ``path`` by name, ``everyone`` always among them."""
    roles = {EVERYONE: EVERYONE_DEFAULT}
    for name, entry in table.items():  # a role answers for the deciders an approval names by its name
        defaults = EVERYONE_DEFAULT if name == EVERYONE else Rights(decides_for=(name,))
        roles[name] = _role(path, f"roles.{name}", entry, defaults)
    return roles


def _role(path: object, where: str, entry: dict[str, Any], defaults: Rights) -> Rights:
    """The role table ``entry`` at ``where``, its unwritten keys taken from ``defaults``."""
    unknown = sorted(set(entry) - set(ROLE_KEYS))
    if unknown:
        raise AuthFileError(f"auth file {path}: {where} has unknown keys {', '.join(unknown)}",
                            hint=f"a role grants {', '.join(ROLE_KEYS)}")
    return Rights(run=names(path, f"{where}.run", entry, defaults.run),
                  read=_scope(path, f"{where}.read", entry, READ_SCOPES, defaults.read),
                  delete=_scope(path, f"{where}.delete", entry, DELETE_SCOPES, defaults.delete),
                  decide=names(path, f"{where}.decide", entry, defaults.decide),
                  decides_for=defaults.decides_for,
                  store=store_prefixes(path, f"{where}.store", entry, defaults.store))


def _scope(path: object, where: str, entry: dict[str, Any], allowed: tuple[Scope, ...],
           default: Scope) -> Scope:
    """The scope word at ``where`` (one of ``allowed``), or ``default`` if the key is not written."""
    key = where.rpartition(".")[2]
    if key not in entry:
        return default
    words = {scope.word: scope for scope in allowed}
    value = entry[key]
    if not isinstance(value, str) or value not in words:
        raise AuthFileError(f"auth file {path}: {where} must be one of {', '.join(map(repr, words))}; "
                            f"got {value!r}")
    return words[value]


def store_prefixes(path: object, where: str, entry: dict[str, Any],
                   default: tuple[str, ...]) -> tuple[str, ...]:
    """The store grants at ``where`` (``default`` if the key is not written): each ``*``, or labels
    joined by ``.``, none empty, each literal or a whole ``{user}`` / ``{tenant}``."""
    prefixes = names(path, where, entry, default)
    for prefix in prefixes:
        if prefix == ALL_NAMESPACES:
            continue
        for label in prefix.split("."):
            if not label or (("{" in label or "}" in label) and label not in PLACEHOLDERS):
                raise AuthFileError(f"auth file {path}: {where} has {prefix!r}, which is not a namespace "
                                    "prefix", hint='write labels joined by ".", each literal, {user} or '
                                                   '{tenant} (e.g. "{user}", "shared.docs"), or "*" for all')
    return prefixes


def names(path: object, where: str, entry: dict[str, Any], default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The list of non-empty strings at ``where`` (its last part is the key in ``entry``), or ``default``."""
    key = where.rpartition(".")[2]
    if key not in entry:
        return default
    value = entry[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AuthFileError(f"auth file {path}: {where} must be a list of non-empty strings; got {value!r}")
    return tuple(value)


def rights_of(roles: dict[str, Rights], named: Iterable[str], own: Rights = Rights(),
              unknown: Callable[[str], None] | None = None) -> Rights:
    """The rights of a user who has ``everyone``, the ``named`` roles and ``own`` grants; a name
    ``roles`` lacks is passed to ``unknown`` (a file's user: refused) or skipped (a token's claim)."""
    rights = roles[EVERYONE].joined(own)
    for name in named:
        if name in roles:
            rights = rights.joined(roles[name])
        elif unknown is not None:
            unknown(name)
    return rights
