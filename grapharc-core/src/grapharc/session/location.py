"""Where sessions live: the ``sessions`` setting, resolved like every other setting.

Flag > ``$GRAPHARC_SESSIONS`` > ``sessions`` in grapharc.toml > ``.grapharc/sessions``: a store URI
as written (``postgresql://user@host/db``), else a folder's path. Every command and the server
resolve it here, so ``grapharc session list`` reads the store ``grapharc serve`` writes.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_SESSIONS = ".grapharc/sessions"


def session_location(given: str | None, *, config: Path | None = None) -> str | Path:
    """The session store ``given`` (a flag's value, or None) resolves to, with env and file behind it."""
    from grapharc.config.settings import load_config
    from grapharc.stores.uris import is_uri

    if given is not None and is_uri(given):
        return given
    found: str | Path = load_config({"sessions": given}, config=config,
                                    defaults={"sessions": DEFAULT_SESSIONS}).value("sessions")
    return found
