"""The option types and parser every benchmark reads its command line with: a bad value is refused
before any work, with a message naming the option and its rule, and exit status 2 (one JSON
document ``{"error": ...}`` on stdout when ``--json`` is among the arguments)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit


class BenchmarkParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors honour ``--json``."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        """Remember the arguments, so that ``error`` knows whether ``--json`` is among them."""
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    given: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        """Exit 2 naming what was wrong: one JSON document on stdout under ``--json``, else
        argparse's usage and message on stderr."""
        if "--json" in self.given:
            print(json.dumps({"error": f"{self.prog}: {message}"}))
            sys.exit(2)
        super().error(message)


def shown(text: str) -> str:
    """``text`` quoted for a message, its middle left out when it is long (a value of 5,000 digits)."""
    return repr(text if len(text) <= 60 else f"{text[:30]}...{text[-20:]}")


def benchmark_parser(description: str | None) -> BenchmarkParser:
    """A benchmark's parser, described by the first line (or paragraph) of its docstring."""
    return BenchmarkParser(description=description)


@dataclass(frozen=True)
class Count:
    """A whole number from ``minimum`` to ``maximum``."""

    minimum: int = 1
    maximum: int = 1_000_000

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number") from None
        if not self.minimum <= value <= self.maximum:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not from {self.minimum} to {self.maximum:,}")
        return value


@dataclass(frozen=True)
class Counts:
    """Comma-separated whole numbers, each from ``minimum`` to ``maximum``."""

    minimum: int = 1
    maximum: int = 1_000_000

    def __call__(self, text: str) -> list[int]:
        each = Count(self.minimum, self.maximum)
        return [each(part.strip()) for part in text.split(",")]


@dataclass(frozen=True)
class Positive:
    """A finite number greater than 0 and at most ``maximum``: seconds, or a rate per second."""

    maximum: float = 86_400.0

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a number") from None
        if not (math.isfinite(value) and 0 < value <= self.maximum):
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a number greater than 0 and at most "
                                             f"{self.maximum:g}")
        return value


@dataclass(frozen=True)
class ReadableFile:
    """A path to an existing file this process may read (``executable``: and run)."""

    executable: bool = False

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"{shown(text)} is not an existing file")
        if not os.access(path, os.X_OK if self.executable else os.R_OK):
            need = "executable" if self.executable else "readable"
            raise argparse.ArgumentTypeError(f"{shown(text)} is not {need}")
        return path


@dataclass(frozen=True)
class FolderOrNone:
    """An existing folder, or the word ``none``."""

    def __call__(self, text: str) -> str:
        if text != "none" and not Path(text).is_dir():
            raise argparse.ArgumentTypeError(f"{shown(text)} is neither an existing folder nor 'none'")
        return text


@dataclass(frozen=True)
class PostgresConninfo:
    """A PostgreSQL URI or ``key=value`` connection string, as psycopg reads it."""

    def __call__(self, text: str) -> str:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict

        try:
            read = conninfo_to_dict(text)
        except psycopg.Error as exc:
            why = " ".join(str(exc).split())
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a PostgreSQL URI or connection string: "
                                             f"{why}") from None
        if not read:
            raise argparse.ArgumentTypeError(f"{shown(text)} names no PostgreSQL server")
        return text


@dataclass(frozen=True)
class StoreURI:
    """A store URI whose scheme an installed distribution serves for ``kind``."""

    kind: str

    def __call__(self, text: str) -> str:
        from grapharc.stores.uris import StoreURIError, known_schemes, split_uri

        try:
            scheme, _ = split_uri(text)
        except StoreURIError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        serving = [name for name, kinds in known_schemes().items() if self.kind in kinds]
        if scheme not in serving:
            raise argparse.ArgumentTypeError(f"no installed store serves {self.kind} at {scheme}: "
                                             f"(schemes that do: {', '.join(serving)})")
        return text


@dataclass(frozen=True)
class EmbedderSpec:
    """An embedder spec the project's resolver opens, such as ``hashing:256``."""

    def __call__(self, text: str) -> str:
        from grapharc.errors import GraphARCError
        from grapharc.memory.embedders import open_embedder

        try:
            open_embedder(text)
        except GraphARCError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text


@dataclass(frozen=True)
class ServerURL:
    """The ``http://`` or ``https://`` address of a server already up."""

    def __call__(self, text: str) -> str:
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018  (reading it checks the port)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a URL: {exc}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not an http:// or https:// address")
        return text


OPTION_TYPES: tuple[type[Any], ...] = (Count, Counts, Positive, ReadableFile, FolderOrNone, PostgresConninfo,
                                       StoreURI, EmbedderSpec, ServerURL)
"""Every type above: an option that takes a value has one of them, or a list of choices."""
