"""Stores: opened by URI through the store registry, and called off the event loop.

:mod:`grapharc.stores.uris` opens ``<scheme>:<location>`` with whichever plugin registered the
scheme; :mod:`grapharc.stores.offload` runs blocking store calls in a pool of threads of their
own; :mod:`grapharc.stores.masking` shows a URI with its credentials masked, wherever one is shown.
Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **{name: "grapharc.stores.uris" for name in (
        "StoreURIError", "UnknownStoreSchemeError", "is_uri", "known_schemes", "open_store", "split_uri",
        "store_uri")},
    **{name: "grapharc.stores.masking" for name in ("masked", "scrubbed")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
