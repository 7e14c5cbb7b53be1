"""The CLI's option types: one per kind of value, so every command refuses bad input alike.

Each is a Typer ``parser``: it turns what was typed (or the declared default) into the value,
or raises ``typer.BadParameter`` with the allowed range, which Click reports as a usage error
naming the option: exit 2, one line (one JSON document with ``--json``). Numbers use the kinds
of :mod:`grapharc.config.values` that the config settings use too. A conventions test
(``tests/grapharc-core/conventions/test_option_types.py``) fails for any numeric or path
parameter declared without one of these types, so a new command cannot take a raw float.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Annotated, Any

import typer

from grapharc._files import not_regular, open_regular
from grapharc.config.settings import KEYS
from grapharc.config.values import LEASE_SECONDS, PORT, Count, Number


def shown(value: Any) -> str:
    """A value as an error message may quote it: repr'd (so control characters are escaped), short."""
    text = repr(str(value) if isinstance(value, Path) else value)
    return text if len(text) <= 300 else text[:297] + "..."


def with_article(noun: str) -> str:
    """``noun`` after "a" or "an", by its first letter ("an auth file", "a policy file")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


class OptionType:
    """A parser for one kind of value; ``describe()`` is what it accepts, shown in ``--help``."""

    metavar = "VALUE"

    def describe(self) -> str:
        raise NotImplementedError

    def convert(self, value: Any) -> Any:
        """The value, or ``ValueError`` whose message is the whole refusal."""
        raise NotImplementedError

    def __call__(self, value: Any) -> Any:
        try:
            return self.convert(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None


class Ranged(OptionType):
    """A number of one kind (count, seconds, dollars, port) in its range."""

    def __init__(self, kind: Count | Number, metavar: str) -> None:
        self.kind = kind
        self.metavar = metavar

    def describe(self) -> str:
        return self.kind.describe()

    def convert(self, value: Any) -> Any:
        try:
            return self.kind(value)
        except ValueError as exc:
            raise ValueError(f"{exc}, got {shown(value)}") from None


def setting(name: str, metavar: str) -> Ranged:
    """The option type of the config setting ``name``: a flag accepts what grapharc.toml does."""
    kind = KEYS[name].parse
    if not isinstance(kind, Count | Number):
        raise TypeError(f"setting {name} is not a number, so it has no ranged option type")
    return Ranged(kind, metavar)


def _path(value: Any) -> Path:
    text = os.fspath(value) if isinstance(value, str | os.PathLike) else str(value)
    if not text or "\x00" in text:
        raise ValueError(f"{shown(text)} is not a usable path (empty, or holds a NUL byte)")
    return Path(text)


def _stat(path: Path) -> os.stat_result | None:
    """``path``'s status, None when nothing is there, ValueError when it cannot be looked at."""
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ValueError(f"cannot use {shown(path)}: {exc.strerror or exc}") from None


def _creatable(path: Path, what: str) -> None:
    """Refuse ``path`` (absent) unless its nearest existing folder is a folder one may write in."""
    folder = path.absolute().parent
    while _stat(folder) is None and folder != folder.parent:
        folder = folder.parent
    status = _stat(folder)
    if status is None or not_regular(status.st_mode) != "a directory":
        raise ValueError(f"cannot create {what} {shown(path)}: {shown(folder)} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create {what} {shown(path)}: folder {shown(folder)} is not writable")


class _RegularFile(OptionType, ABC):
    """A regular file (not a folder, FIFO, socket or device) this process may ``access``; what
    a path with no file there means is ``missing``'s to say."""

    metavar = "FILE"
    access, able = os.R_OK, "readable"

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: Any) -> Path:
        path = _path(value)
        status = _stat(path)
        if status is None:
            return self.missing(path)
        kind = not_regular(status.st_mode)
        if kind:
            raise ValueError(f"{shown(path)} is {kind}, not {with_article(self.what)}")
        if not os.access(path, self.access):
            raise ValueError(f"{self.what} {shown(path)} is not {self.able}")
        return path

    @abstractmethod
    def missing(self, path: Path) -> Path:
        """``path`` where no file is yet, or ``ValueError`` saying why it will not do."""


class ReadableFile(_RegularFile):
    """An existing regular file one may read (not a folder, FIFO, socket or device)."""

    def describe(self) -> str:
        return f"an existing, readable {self.what}"

    def missing(self, path: Path) -> Path:
        raise ValueError(f"{self.what} {shown(path)} does not exist")


class TraceLocation(OptionType):
    """A trace to read: an existing JSONL file, or a ``traces`` store URI (reached when read)."""

    metavar = "TRACE"

    def describe(self) -> str:
        return "an existing, readable trace file or a trace store URI (file:PATH, postgresql://HOST/DB)"

    def convert(self, value: Any) -> str:
        from grapharc.stores.uris import is_uri

        text = os.fspath(value)
        if not is_uri(text):
            ReadableFile("trace file").convert(text)
        return text


class WritableFile(_RegularFile):
    """A regular file one may write, or a path where one can be created."""

    access, able = os.W_OK, "writable"

    def describe(self) -> str:
        return f"a writable {self.what} (created if missing)"

    def missing(self, path: Path) -> Path:
        _creatable(path, self.what)
        return path


class TraceOutput(WritableFile):
    """A trace to append to: a new file, an empty one, or one whose first line is a trace event.

    Appending events to any other file would damage it and leave a trace no reader takes.
    """

    def __init__(self) -> None:
        super().__init__("trace file")

    def convert(self, value: Any) -> Path:
        path = super().convert(value)
        first = _first_line(path)
        if first.strip():
            try:
                event = json.loads(first)
            except (ValueError, RecursionError):
                event = None
            if not isinstance(event, dict) or "phase" not in event:
                raise ValueError(f"{shown(path)} is not a JSONL trace (its first line is no trace "
                                 "event); name a new file or a trace")
        return path


def _first_line(path: Path) -> str:
    """The start of ``path``'s first line (empty when it is missing or unreadable)."""
    try:
        with open_regular(path) as handle:
            return handle.readline(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return ""


class Folder(OptionType):
    """A folder, or (unless ``must_exist``) a path where one can be created."""

    metavar = "DIR"

    def __init__(self, what: str, *, must_exist: bool = False) -> None:
        self.what = what
        self.must_exist = must_exist

    def describe(self) -> str:
        return f"an existing folder for the {self.what}" if self.must_exist else \
            f"a {self.what} (created if missing)"

    def convert(self, value: Any) -> Path:
        path = _path(value)
        status = _stat(path)
        if status is None and self.must_exist:
            raise ValueError(f"{shown(path)} does not exist; the {self.what} must be a folder that does")
        if status is None:
            _creatable(path, self.what)
        elif not_regular(status.st_mode) != "a directory":
            kind = not_regular(status.st_mode) or "a file"
            raise ValueError(f"the {self.what} {shown(path)} is {kind}, not a folder")
        return path


class PathOrStoreURI(OptionType):
    """A store URI such as ``postgresql://user@host/db``, kept as written for the store to open (a
    bad or unreachable one is the command's error), or a path as ``path`` takes it."""

    def __init__(self, path: OptionType, example: str) -> None:
        self.path = path
        self.example = example
        self.metavar = f"{path.metavar}|URI"

    def describe(self) -> str:
        return f"{self.path.describe()}, or a store URI such as {self.example}"

    def convert(self, value: Any) -> str:
        from grapharc.stores.uris import is_uri

        if isinstance(value, str) and is_uri(value):
            return value
        return str(self.path.convert(value))


def option(*decls: str, kind: OptionType, help: str, **extra: Any) -> Any:
    """A ``typer.Option`` parsed by ``kind``, its help ending in what it accepts."""
    return typer.Option(*decls, parser=kind, metavar=kind.metavar,
                        help=f"{help} Accepts {kind.describe()}.", **extra)


def argument(metavar: str, *, kind: OptionType, help: str, **extra: Any) -> Any:
    """A ``typer.Argument`` parsed by ``kind``; ``metavar`` names it in help and errors."""
    return typer.Argument(parser=kind, metavar=metavar, help=f"{help} Accepts {kind.describe()}.",
                          **extra)


LeaseSeconds = Annotated[float, option(
    "--lease", kind=Ranged(LEASE_SECONDS, "SECONDS"),
    help="Seconds a runner's lease lives between heartbeats before others may reclaim.")]
Port = Annotated[int, option("--port", kind=Ranged(PORT, "PORT"),
                             help="Port to listen on (0 picks a free one).")]
MaxRounds = Annotated[int | None, option("--max-rounds", kind=setting("max_rounds", "N"),
                                         help="Round cap of the loop.")]
MaxTokens = Annotated[int | None, option("--max-tokens", kind=setting("max_tokens", "N"),
                                         help="Token budget.")]
MaxIterations = Annotated[int | None, option(
    "--max-iterations", kind=setting("max_iterations", "N"),
    help="Node-execution budget: the hard ceiling.")]
MaxSeconds = Annotated[float | None, option("--max-seconds", kind=setting("max_seconds", "SECONDS"),
                                            help="Wall-clock budget.")]
MaxCostUsd = Annotated[float | None, option(
    "--max-cost-usd", kind=setting("max_cost_usd", "USD"),
    help="Dollar budget for priced model calls (an unpriced call ends the run).")]
MaxConcurrency = Annotated[int | None, option(
    "--max-concurrency", kind=setting("max_concurrency", "N"), help="Parallel nodes at most.")]
ConfigFile = Annotated[Path | None, option(
    "--config", kind=ReadableFile("config file"),
    help="Config file to read instead of ./grapharc.toml (no parent search).")]
PolicyFile = Annotated[Path | None, option("--policy", kind=ReadableFile("policy file"),
                                           help="Policy TOML document.")]
TraceFile = Annotated[str | None, option(
    "--trace", kind=PathOrStoreURI(TraceOutput(), "file:runs/trace.jsonl"),
    help="Append the run's trace events here.")]
TenantOption = Annotated[str | None, typer.Option(
    "--tenant", help="Tenant whose scoped policy rules apply.")]
Sessions = Annotated[str | None, option(
    "--sessions", "--dir", kind=PathOrStoreURI(Folder("session folder"), "postgresql://user@host:5432/db"),
    help="Session store: a folder or a URI, as grapharc serve --sessions takes it (default: "
         "$GRAPHARC_SESSIONS, sessions in grapharc.toml, or .grapharc/sessions).")]


def sessions_flag(where: str) -> str:
    """``--sessions WHERE`` as a hint to copy writes it (quoted for a shell): a command it suggests
    must open the same session store, whatever the flag, environment or file that chose it."""
    import shlex

    return f"--sessions {shlex.quote(where)}"
