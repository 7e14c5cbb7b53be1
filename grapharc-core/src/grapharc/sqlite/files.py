"""Where the SQLite session layer keeps its files, decided here rather than by the session manager.

A ``sqlite:`` location that is a directory (one that exists, or a new name without a
suffix) holds the whole layer: ``DIR/sessions.db`` for the session store and
``DIR/checkpoints.db`` for LangGraph's checkpoints, so ``sqlite:DIR`` (or a bare
``DIR``) serves a ``SessionManager``; a server keeps its run queue beside them in
``DIR/runs.db``. A name with a suffix (``runs/checkpoints.db``) is
the one file of that kind of store.
"""

from __future__ import annotations

from pathlib import Path

from grapharc.errors import GraphARCError

SESSIONS_FILE = "sessions.db"
CHECKPOINTS_FILE = "checkpoints.db"
RUNS_FILE = "runs.db"


def database_path(location: str, filename: str, error: type[GraphARCError]) -> Path:
    """The file a ``sqlite:`` location names for a store whose file in a directory is ``filename``."""
    if not location:
        raise error(f"sqlite: needs a directory or a file, as in sqlite:.grapharc/sessions or "
                    f"sqlite:runs/{filename}")
    path = Path(location).expanduser()
    if path.is_dir() or not path.suffix:
        return path / filename
    return path


def prepare_database_file(path: Path, what: str, error: type[GraphARCError]) -> None:
    """Refuse a ``path`` that is a directory or lies under a file; create its folders."""
    if path.is_dir():
        raise error(f"{what} {path} is a directory; name a file in it")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise error(f"{what} {path}: {parent} is a file, not a directory",
                        hint="name a directory (it is created if missing) or a new file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise error(f"cannot create the folder of {what} {path}: {exc.strerror or exc}") from exc


def footprint(path: Path) -> dict[str, int]:
    """Bytes on disk of a SQLite file with its WAL and shared-memory files, keyed by the file."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            total += candidate.stat().st_size
    return {str(path.resolve()): total}


def holds_sessions(where: str | Path) -> bool:
    """Whether ``where`` holds a session store: a folder's database file must exist already (reading
    commands never create one); a URI's store is opened and answers for itself."""
    from grapharc.session.errors import SessionError

    return isinstance(where, str) or database_path(str(where), SESSIONS_FILE, SessionError).is_file()


def holds_server_records(where: str | Path) -> bool:
    """Whether ``where`` holds a server's own records (runs, assistants, cron schedules: a folder's
    ``runs.db`` must exist already, as for ``holds_sessions``); a URI's store answers for itself."""
    from grapharc.session.errors import SessionError

    return isinstance(where, str) or database_path(str(where), RUNS_FILE, SessionError).is_file()
