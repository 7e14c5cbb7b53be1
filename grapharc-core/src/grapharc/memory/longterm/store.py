"""``GraphARCStore``: LangGraph's ``BaseStore`` over any ``ItemStore``.

It turns each op of a batch into one call on the backend, in the order given (a
read after a write in one batch sees the write): ``GetOp`` -> ``get``, ``PutOp``
-> ``put`` (or ``delete`` for a ``None`` value), ``SearchOp`` -> ``search``,
``ListNamespacesOp`` -> ``list_namespaces`` with its prefix and suffix conditions
merged into one of each. TTLs are in minutes, as LangGraph's; ``ttl`` is LangGraph's
``TTLConfig`` (``default_ttl``, ``refresh_on_read``, ``sweep_interval_minutes``).
``index_fields`` is what ``query`` search reads of an item put with ``index=None``
(default: every string in the value). ``abatch`` runs the synchronous backend in
GraphARC's store threads (``grapharc.stores.offload``), so the event loop never waits
on it. ``start_ttl_sweeper`` sweeps expired items in a daemon thread, as LangGraph's
Postgres store does; expired items are invisible to reads whether swept or not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from grapharc.memory.longterm.contracts import (
    IndexFields,
    InvalidItemSearchError,
    ItemStore,
    Namespace,
    StoredItem,
    check_index,
)
from grapharc.memory.longterm.namespaces import NoMatch, merged
from grapharc.stores.offload import to_thread

DEFAULT_SWEEP_MINUTES = 1.0


def as_item(stored: StoredItem) -> Item:
    """A backend's item as LangGraph's ``Item``."""
    return Item(value=stored.value, key=stored.key, namespace=stored.namespace,
                created_at=stored.created_at, updated_at=stored.updated_at)


def as_search_item(stored: StoredItem) -> SearchItem:
    """A backend's search result as LangGraph's ``SearchItem``, its score kept."""
    return SearchItem(stored.namespace, stored.key, stored.value, stored.created_at,
                      stored.updated_at, stored.score)


def _pattern(conditions: Sequence[MatchCondition], match_type: str) -> Namespace | None:
    """The one pattern all ``conditions`` of ``match_type`` ask for (suffixes aligned at the end)."""
    paths = [tuple(condition.path) for condition in conditions if condition.match_type == match_type]
    if match_type == "suffix":
        reversed_pattern = merged([tuple(reversed(path)) for path in paths])
        return None if reversed_pattern is None else tuple(reversed(reversed_pattern))
    return merged(paths)


class GraphARCStore(BaseStore):
    """A LangGraph store whose items live in ``items`` (any ``ItemStore``)."""

    supports_ttl = True

    def __init__(self, items: ItemStore, *, ttl: TTLConfig | None = None,
                 index_fields: Sequence[str] | None = None) -> None:
        self.items = items
        self.ttl_config = ttl
        self._index_fields: IndexFields = check_index(index_fields)
        self._sweeper: threading.Thread | None = None
        self._stop_sweeping = threading.Event()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each op against the backend, in order; one result per op."""
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in GraphARC's store threads, so the event loop is free meanwhile."""
        return await to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = self.items.get(op.namespace, op.key, refresh_ttl=op.refresh_ttl)
            return None if found is None else as_item(found)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return [as_search_item(found) for found in self.items.search(
                op.namespace_prefix, query=op.query, filter=op.filter, limit=op.limit,
                offset=op.offset, refresh_ttl=op.refresh_ttl)]
        if isinstance(op, ListNamespacesOp):
            return self._list(op)
        raise InvalidItemSearchError(f"a store batch got {type(op).__name__}, which is not a "
                                     "GetOp, PutOp, SearchOp or ListNamespacesOp")

    def _put(self, op: PutOp) -> None:
        if op.value is None:
            self.items.delete(op.namespace, op.key)
            return
        index = self._index_fields if op.index is None else op.index
        self.items.put(op.namespace, op.key, op.value, index=index, ttl_minutes=op.ttl)

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        for condition in conditions:
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidItemSearchError(f"namespace match type {condition.match_type!r} is "
                                             "neither 'prefix' nor 'suffix'")
        try:
            prefix, suffix = _pattern(conditions, "prefix"), _pattern(conditions, "suffix")
        except NoMatch:
            return []
        return self.items.list_namespaces(prefix=prefix, suffix=suffix, max_depth=op.max_depth,
                                          limit=op.limit, offset=op.offset)

    def sweep(self) -> int:
        """Delete every expired item now; how many were deleted."""
        return self.items.sweep()

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Future[None]:
        """Sweep expired items every ``sweep_interval_minutes`` (default: the TTL config's, else
        one minute) in a daemon thread, until ``stop_ttl_sweeper``; the future ends with it."""
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        minutes = sweep_interval_minutes or configured or DEFAULT_SWEEP_MINUTES
        done: Future[None] = Future()
        if self._sweeper is not None and self._sweeper.is_alive():
            raise InvalidItemSearchError("this store's TTL sweeper is already running")
        self._stop_sweeping.clear()

        def sweep_until_stopped() -> None:
            try:
                while not self._stop_sweeping.wait(minutes * 60.0):
                    self.items.sweep()
            except BaseException as exc:  # the future reports it to whoever waits on it
                done.set_exception(exc)
                return
            done.set_result(None)

        self._sweeper = threading.Thread(target=sweep_until_stopped, name="grapharc-store-sweeper",
                                         daemon=True)
        self._sweeper.start()
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper; whether it has stopped within ``timeout`` seconds."""
        self._stop_sweeping.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        return not self._sweeper.is_alive()

    def close(self) -> None:
        """Stop the sweeper and close the backend."""
        self.stop_ttl_sweeper()
        self.items.close()
