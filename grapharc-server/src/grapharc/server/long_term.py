"""The long-term store ``grapharc serve`` serves at ``/store``: the URI it opens and where it is by default.

``--store URI`` names any store that keeps ``items`` (``memory:``, ``sqlite:PATH``,
``postgresql://...``, or a plugin's scheme), opened with ``open_long_term_store``. Without it the
store sits beside the sessions: in the same database when the sessions' scheme keeps items too
(``postgresql://``), else in the SQLite file ``store.db`` of the sessions folder. Where no SQLite
item store is installed (grapharc-memory-sqlite) the default falls back to ``memory:``, kept in
each server process only, and the server says so as it starts.
"""

from __future__ import annotations

from pathlib import Path

from grapharc.errors import ConfigurationError
from grapharc.stores.uris import is_uri, known_schemes, split_uri

STORE_FILE = "store.db"
"""The SQLite file of the default store, in the sessions folder."""
IN_PROCESS = "memory:"


def default_store_uri(sessions: str) -> str:
    """The store beside the sessions at ``sessions`` (a folder or a store URI); see the module. The
    sessions folder is made for its SQLite file if need be, as opening the sessions would make it
    (a server of the store alone opens no sessions)."""
    schemes = known_schemes()
    folder: str | None = sessions
    if is_uri(sessions):
        scheme, location = split_uri(sessions)
        if scheme != "sqlite" and "items" in schemes.get(scheme, ()):
            return sessions
        folder = location if scheme == "sqlite" else None
    if folder is not None and "items" in schemes.get("sqlite", ()):
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(f"cannot make the sessions folder {folder} for the store's file: "
                                     f"{exc.strerror or exc}",
                                     hint="pass --store URI, or --sessions a folder one may write") from exc
        return f"sqlite:{Path(folder) / STORE_FILE}"
    return IN_PROCESS


def kept_in_process(uri: str) -> bool:
    """Whether the store at ``uri`` lives in the server process only (lost when it stops)."""
    return split_uri(uri)[0] == "memory"
