"""A search or a namespace listing of the long-term store under several prefixes, read as one.

A user whose grants (``store_access.scoped_prefixes``) cover only parts of the prefix they asked
about is answered from each part: every part is read up to ``offset + limit``, the answers merged
and the page cut from the merge. Merged search items rank by score (a ``query`` search), then most
recently updated first; namespaces sort as tuples. Under one prefix the store's own order and
paging are kept. A ``refresh_ttl`` read refreshes what each part read, which may be more than the
page it answers.
"""

from __future__ import annotations

import asyncio
from itertools import chain
from typing import Any

from langgraph.store.base import BaseStore, SearchItem

from grapharc.server.service.store_access import Namespace


async def search(store: BaseStore, prefixes: list[Namespace], *, query: str | None,
                 filter: dict[str, Any] | None, limit: int, offset: int,
                 refresh_ttl: bool | None) -> list[SearchItem]:
    """The page ``offset``..``offset + limit`` of the items under ``prefixes`` matching ``filter``
    (ranked by ``query`` when given)."""
    if not prefixes:
        return []
    if len(prefixes) == 1:
        return await store.asearch(prefixes[0], query=query, filter=filter, limit=limit, offset=offset,
                                   refresh_ttl=refresh_ttl)
    parts = await asyncio.gather(*(store.asearch(prefix, query=query, filter=filter, limit=offset + limit,
                                                 offset=0, refresh_ttl=refresh_ttl) for prefix in prefixes))
    merged = sorted(chain.from_iterable(parts), key=lambda item: item.updated_at, reverse=True)
    if query is not None:  # a stable sort: equal scores stay newest first
        merged.sort(key=lambda item: item.score if item.score is not None else float("-inf"), reverse=True)
    return merged[offset:offset + limit]


async def list_namespaces(store: BaseStore, prefixes: list[Namespace], *, suffix: Namespace | None,
                          max_depth: int | None, limit: int, offset: int) -> list[Namespace]:
    """The page ``offset``..``offset + limit`` of the namespaces under ``prefixes`` ending with
    ``suffix``, each cut to ``max_depth`` labels."""
    if not prefixes:
        return []
    if len(prefixes) == 1:
        return await store.alist_namespaces(prefix=prefixes[0] or None, suffix=suffix, max_depth=max_depth,
                                            limit=limit, offset=offset)
    parts = await asyncio.gather(*(store.alist_namespaces(prefix=prefix or None, suffix=suffix,
                                                          max_depth=max_depth, limit=offset + limit, offset=0)
                                   for prefix in prefixes))
    return sorted(set(chain.from_iterable(parts)))[offset:offset + limit]
