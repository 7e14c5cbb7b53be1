"""The long-term store over HTTP, as the SDK's ``client.store.*`` calls it: put, get and delete an item,
search items under a namespace prefix, list namespaces.

Answers are LangGraph's server's: a put or delete is 204, a get the item (``null`` when there is
none), a search ``{"items": [...]}`` (each with its ``score``), a listing ``{"namespaces": [...]}``;
``ttl`` is in minutes. A request is checked (``store_checks``) before the store is asked. With an
auth file a caller reads and writes only the namespaces their store grants cover
(``grapharc.server.service.store_access``): an item elsewhere is a 403 naming the namespace and
their grants, and a search or listing shows only what is under those grants.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from langgraph.store.base import BaseStore, InvalidNamespaceError
from pydantic import BaseModel, ConfigDict, Field

from grapharc.errors import GraphARCError
from grapharc.memory.longterm.contracts import MAX_PAGE_NUMBER, InvalidItemError, InvalidItemSearchError
from grapharc.server.api import store_checks as checks
from grapharc.server.api.guards import Caller
from grapharc.server.api.problems import ApiProblem
from grapharc.server.auth import User
from grapharc.server.service import store_reads
from grapharc.server.service.store_access import Namespace, grants_named, may_use, scoped_prefixes

router = APIRouter(prefix="/store", tags=["store"])

MAX_PAGE = 1000
MAX_QUERY = 10_000
MAX_TTL_MINUTES = 100 * 365 * 24 * 60.0


async def served_store(request: Request) -> BaseStore:
    """The route dependency: the store this server serves."""
    store: BaseStore = request.app.state.store
    return store


Store = Annotated[BaseStore, Depends(served_store)]


class ItemPut(BaseModel):
    """PUT /store/items: the item's namespace, key and value; which fields to index for search
    (``false``: none) and how many minutes it lives unread (``ttl``, none: for ever)."""

    model_config = ConfigDict(extra="forbid")
    namespace: list[str]
    key: str
    value: dict[str, Any]
    index: Literal[False] | list[str] | None = None
    ttl: float | None = Field(default=None, gt=0, le=MAX_TTL_MINUTES)


class ItemRef(BaseModel):
    """DELETE /store/items: the item's namespace and key."""

    model_config = ConfigDict(extra="forbid")
    namespace: list[str]
    key: str


class ItemSearch(BaseModel):
    """POST /store/items/search: items under ``namespace_prefix`` whose values match ``filter``,
    ranked by ``query`` when given, paged."""

    model_config = ConfigDict(extra="forbid")
    namespace_prefix: list[str] = Field(default_factory=list)
    filter: dict[str, Any] | None = None
    limit: int = Field(default=10, ge=1, le=MAX_PAGE)
    offset: int = Field(default=0, ge=0, le=MAX_PAGE_NUMBER)
    query: str | None = Field(default=None, max_length=MAX_QUERY)
    refresh_ttl: bool | None = None


class NamespaceListing(BaseModel):
    """POST /store/namespaces: the namespaces starting with ``prefix`` and ending with ``suffix``,
    each cut to ``max_depth`` labels, paged."""

    model_config = ConfigDict(extra="forbid")
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = Field(default=None, ge=1, le=checks.MAX_DEPTH)
    limit: int = Field(default=100, ge=1, le=MAX_PAGE)
    offset: int = Field(default=0, ge=0, le=MAX_PAGE_NUMBER)


def _require(user: User | None, namespace: Namespace) -> None:
    """403 unless ``user`` may use the items of ``namespace``."""
    if user is not None and not may_use(user, namespace):
        shown = ".".join(namespace)
        raise ApiProblem(403, f"{user.name} may not use the store namespace {shown!r}; their store grants "
                              f"cover {grants_named(user)}",
                         hint="the auth file's store grants (a role's store, [roles.everyone]) say who may")


def _visible(user: User | None, prefix: Namespace) -> list[Namespace]:
    """The prefixes under ``prefix`` that ``user`` may read (403 naming it when none is)."""
    prefixes = scoped_prefixes(user, prefix)
    if not prefixes and user is not None:
        _require(user, prefix)  # nothing under it is theirs: refused as the prefix itself would be
    return prefixes


@asynccontextmanager
async def _store_refusals() -> AsyncIterator[None]:
    """The store's own refusals as problem documents: a namespace, value, filter or page it does
    not take (422), a TTL it does not keep (501), and a store that failed (503: not the client)."""
    try:
        yield
    except (InvalidNamespaceError, InvalidItemError, InvalidItemSearchError) as exc:
        hint = getattr(exc, "hint", "") or "see docs/concepts/http-api.md (the long-term store)"
        raise ApiProblem(422, f"the store refused the request: {exc}", hint=hint) from None
    except NotImplementedError as exc:
        raise ApiProblem(501, f"this server's store cannot do that: {exc}",
                         hint="leave ttl out, or serve a store that keeps TTLs") from None
    except GraphARCError as exc:
        raise ApiProblem(503, f"the store failed: {exc}", hint=exc.hint or "try again; the server's log "
                                                                      "and the store's say why") from None


@router.put("/items", status_code=204)
async def put_item(body: ItemPut, store: Store, user: Caller) -> Response:
    """Store an item (replacing what was at its key; its ``created_at`` kept): the SDK's ``put_item``."""
    namespace = checks.namespace(body.namespace, "namespace")
    key = checks.key(body.key)
    _require(user, namespace)
    async with _store_refusals():
        await store.aput(namespace, key, body.value, index=body.index, ttl=body.ttl)
    return Response(status_code=204)


@router.get("/items")
async def get_item(store: Store, user: Caller, namespace: Annotated[str, Query(max_length=10_000)],
                   key: Annotated[str, Query()], refresh_ttl: bool | None = None) -> dict[str, Any] | None:
    """The item at ``namespace`` (labels joined by ``.``) and ``key``, or null: the SDK's ``get_item``."""
    found_in = checks.dotted(namespace, "namespace")
    _require(user, found_in)
    async with _store_refusals():
        item = await store.aget(found_in, checks.key(key), refresh_ttl=refresh_ttl)
    return item.dict() if item is not None else None


@router.delete("/items", status_code=204)
async def delete_item(body: ItemRef, store: Store, user: Caller) -> Response:
    """Delete an item (none there is no error): the SDK's ``delete_item``."""
    namespace = checks.namespace(body.namespace, "namespace")
    key = checks.key(body.key)
    _require(user, namespace)
    async with _store_refusals():
        await store.adelete(namespace, key)
    return Response(status_code=204)


@router.post("/items/search")
async def search_items(body: ItemSearch, store: Store, user: Caller) -> dict[str, Any]:
    """Items under a prefix, filtered, ranked by a query, paged: the SDK's ``search_items``."""
    prefix = checks.namespace(body.namespace_prefix, "namespace_prefix", empty=True)
    prefixes = _visible(user, prefix)
    async with _store_refusals():
        items = await store_reads.search(store, prefixes, query=body.query, filter=body.filter,
                                         limit=body.limit, offset=body.offset, refresh_ttl=body.refresh_ttl)
    return {"items": [item.dict() for item in items]}


@router.post("/namespaces")
async def list_namespaces(body: NamespaceListing, store: Store, user: Caller) -> dict[str, Any]:
    """The namespaces holding items, matched and paged: the SDK's ``list_namespaces``."""
    prefix = checks.namespace(body.prefix or [], "prefix", empty=True)
    suffix = checks.namespace(body.suffix, "suffix") if body.suffix else None
    prefixes = _visible(user, prefix)
    async with _store_refusals():
        found = await store_reads.list_namespaces(store, prefixes, suffix=suffix,
                                                  max_depth=body.max_depth, limit=body.limit,
                                                  offset=body.offset)
    return {"namespaces": [list(namespace) for namespace in found]}
