"""Namespace listing: prefix and suffix patterns (``"*"`` matches any label), depth and paging.

LangGraph's ``ListNamespacesOp`` carries any number of prefix and suffix conditions;
``merged`` folds those of one type into one pattern (a label beats ``"*"``; two
different labels at one place match nothing), so a backend answers a single prefix
and a single suffix. ``listed`` is the listing itself over namespaces a backend has
already narrowed (a SQL backend narrows with its prefix index, then calls it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from grapharc.memory.longterm.contracts import InvalidItemSearchError, Namespace, check_namespace, check_page

WILDCARD = "*"


class NoMatch(Exception):
    """Two patterns of one type that no namespace can meet together."""


def merged(patterns: Sequence[Namespace]) -> Namespace | None:
    """One pattern meeting all of ``patterns`` (aligned at the start; a suffix caller reverses
    them first), ``None`` when there are none; ``NoMatch`` if they contradict each other."""
    if not patterns:
        return None
    width = max(len(pattern) for pattern in patterns)
    labels: list[str] = []
    for place in range(width):
        found = {pattern[place] for pattern in patterns if place < len(pattern)} - {WILDCARD}
        if len(found) > 1:
            raise NoMatch
        labels.append(found.pop() if found else WILDCARD)
    return tuple(labels)


def _fits(namespace: Namespace, pattern: Namespace) -> bool:
    return len(namespace) >= len(pattern) and all(
        wanted in (WILDCARD, label) for label, wanted in zip(namespace, pattern, strict=False))


def matches(namespace: Namespace, prefix: Namespace | None, suffix: Namespace | None) -> bool:
    """Whether ``namespace`` starts with ``prefix`` and ends with ``suffix`` (either may be None)."""
    if prefix and not _fits(namespace, prefix):
        return False
    return not suffix or _fits(tuple(reversed(namespace)), tuple(reversed(suffix)))


def check_listing(prefix: Namespace | None, suffix: Namespace | None, max_depth: int | None,
                  limit: int, offset: int) -> None:
    """Refuse a listing that cannot be answered, naming what is wrong."""
    for pattern in (prefix, suffix):
        if pattern is not None:
            check_namespace(pattern)
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int)
                                  or max_depth < 1):
        raise InvalidItemSearchError(f"max_depth {max_depth!r} is not a whole number >= 1")
    check_page(limit, offset)


def listed(namespaces: Iterable[Namespace], prefix: Namespace | None, suffix: Namespace | None,
           max_depth: int | None, limit: int, offset: int) -> list[Namespace]:
    """The matching namespaces, cut to ``max_depth`` labels, deduplicated, sorted and paged."""
    found = {namespace[:max_depth] if max_depth is not None else namespace
             for namespace in namespaces if matches(namespace, prefix, suffix)}
    return sorted(found)[offset:offset + limit]
