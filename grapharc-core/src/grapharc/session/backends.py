"""Opening the session layer's two stores from one location, through the stores hook.

A location is a store URI (``<scheme>:<location>``) or a bare directory path, which
``grapharc.stores.store_uri`` reads as the scheme registered as the local default.
The same location opens the ``sessions`` store and the ``checkpoints`` provider; how it
maps onto files or tables is the scheme's business.
"""

from __future__ import annotations

import os
from typing import Any

from grapharc.session.contracts import CheckpointerProvider, SessionStore
from grapharc.session.errors import SessionStoreError
from grapharc.stores.masking import masked
from grapharc.stores.uris import open_store, store_uri


def open_backends(location: str | os.PathLike[str]) -> tuple[SessionStore, CheckpointerProvider]:
    """The session store and the checkpointer provider ``location`` names (the store is closed
    again if the provider cannot be opened)."""
    store: SessionStore = _open_checked(location, "sessions", SessionStore)
    try:
        checkpoints: CheckpointerProvider = _open_checked(location, "checkpoints", CheckpointerProvider)
    except BaseException:
        store.close()
        raise
    return store, checkpoints


def _open_checked(location: str | os.PathLike[str], kind: str, contract: type[Any]) -> Any:
    """Open ``kind`` at ``location`` and refuse an object that does not keep ``contract``."""
    uri = store_uri(location, kind)
    opened = open_store(uri, kind=kind)
    if not isinstance(opened, contract):
        raise SessionStoreError(
            f"the {kind} store for {masked(uri)} is {type(opened).__name__!r}, which is not a "
            f"{contract.__name__}",
            hint="the distribution that registered its scheme must return one "
                 "(see grapharc.session.contracts)")
    return opened
