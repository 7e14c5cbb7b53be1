"""Opening stores by URI: ``<scheme>:<location>`` through the store registry.

Plugins register a scheme for one or more kinds of store (claims, artifacts,
checkpoints, sessions, runs); ``open_store("memory:")`` and
``open_store("sqlite:runs/checkpoints.db", kind="checkpoints")`` go through the
same lookup, so a new backend needs no change here. A message that names a URI names it
through ``grapharc.stores.masking.masked``, its credentials masked. Where a bare path is accepted
instead of a URI (a session directory), ``store_uri`` reads it as the scheme whose
registration declares itself the kind's ``local_default``.
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.plugins import UnknownNameError, registry, resolve_factory
from grapharc.plugins.types import STORE_KINDS
from grapharc.stores.masking import masked


class StoreURIError(GraphARCError, ValueError):
    """A store URI that cannot be read, or that names no single kind of store."""


class UnknownStoreSchemeError(UnknownNameError):
    """A URI scheme no installed distribution registered."""


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+-]*:")


def split_uri(uri: str) -> tuple[str, str]:
    """``scheme:location``; a ``//`` right after the colon is dropped (``sqlite:///tmp/x.db``)."""
    if not isinstance(uri, str) or ":" not in uri:
        shown = masked(uri) if isinstance(uri, str) else uri
        raise StoreURIError(f"store URI {shown!r} is not of the form <scheme>:<location>",
                            hint="for example memory: or sqlite:path/to/file.db")
    scheme, _, location = uri.partition(":")
    if not scheme or not scheme.replace("+", "").replace("-", "").isalnum():
        raise StoreURIError(f"store URI {masked(uri)!r} has no valid scheme before the ':'")
    return scheme.lower(), location.removeprefix("//")


def known_schemes() -> dict[str, list[str]]:
    """Each registered scheme and the kinds of store it serves."""
    schemes: dict[str, list[str]] = {}
    for key in registry("stores"):
        scheme, _, kind = key.partition(":")
        schemes.setdefault(scheme, []).append(kind)
    return {scheme: sorted(kinds) for scheme, kinds in sorted(schemes.items())}


def open_store(uri: str, kind: str | None = None, **options: Any) -> Any:
    """Open the store ``uri`` names; ``kind`` may be omitted when the scheme serves only one.
    ``options`` go to the scheme's factory as keywords (an item store's ``embedder``); a factory
    that takes none of them is refused, naming the scheme and the options."""
    scheme, location = split_uri(uri)
    schemes = known_schemes()
    if scheme not in schemes:
        raise UnknownStoreSchemeError("store scheme", scheme, sorted(schemes),
                                      hint=_install_provider(scheme, kind))
    served = schemes[scheme]
    if kind is None:
        if len(served) != 1:
            raise StoreURIError(f"scheme {scheme!r} serves {', '.join(served)}; "
                                "say which kind of store to open")
        kind = served[0]
    if kind not in STORE_KINDS:
        raise StoreURIError(f"unknown kind of store {kind!r}; kinds: {', '.join(sorted(STORE_KINDS))}")
    if kind not in served:
        raise StoreURIError(f"scheme {scheme!r} does not serve {kind}; it serves {', '.join(served)}",
                            hint=_install_provider(scheme, kind))
    entry = registry("stores")[f"{scheme}:{kind}"]
    factory = resolve_factory(entry.item.factory, plugin=entry.distribution)
    if options:
        _check_options(factory, location, kind, options, f"{entry.distribution}'s {scheme}: {kind} store")
    return factory(location, kind, **options)


def _check_options(factory: Any, location: str, kind: str, options: dict[str, Any], store: str) -> None:
    """Refuse ``options`` the factory cannot take, before calling it."""
    try:
        inspect.signature(factory).bind(location, kind, **options)
    except TypeError as exc:
        raise StoreURIError(f"{store} takes no {', '.join(sorted(options))} option",
                            hint="leave the option out, or use a store that supports it") from exc
    except ValueError:  # a callable without a signature Python can read: let the call decide
        return


def _install_provider(scheme: str, kind: str | None) -> str:
    """How to get a store for ``scheme`` (and ``kind``): the GraphARC distribution that serves it,
    or for a scheme none of them serves, a plugin that registers it."""
    from grapharc._missing import install_hint, store_provider

    provider = store_provider(scheme, kind)
    if provider is None:
        return f"install a plugin that registers the {scheme!r} scheme (see: grapharc plugins)"
    return f"it comes with {provider}. {install_hint(provider)}"


def is_uri(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a URI (a string starting ``scheme:``) rather than a path."""
    return isinstance(location, str) and _SCHEME.match(location) is not None


def store_uri(location: str | os.PathLike[str], kind: str) -> str:
    """``location`` if it is a URI, else the bare path under the ``local_default`` scheme for ``kind``.

    A ``Path`` is always a path; a string is a URI when it starts with ``scheme:`` (write
    ``./name:x`` for a folder whose name holds a colon).
    """
    if is_uri(location):
        return str(location)
    path = os.fspath(location)
    defaults = sorted((key.partition(":")[0], entry.distribution) for key, entry in registry("stores").items()
                      if key.endswith(f":{kind}") and entry.item.local_default)
    if not defaults:
        raise StoreURIError(f"no installed store serves {kind} at a bare path like {path!r}",
                            hint="give a URI, <scheme>:<location>")
    if len(defaults) > 1:
        named = ", ".join(f"{scheme} ({distribution})" for scheme, distribution in defaults)
        raise StoreURIError(f"several stores claim bare paths for {kind}: {named}",
                            hint="give a URI, <scheme>:<location>, or uninstall one of them")
    return f"{defaults[0][0]}:{path}"
