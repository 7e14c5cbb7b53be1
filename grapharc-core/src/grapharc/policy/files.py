"""A policy document as read: the file's bytes parsed as TOML, with where it came from and its digest.

Every policy source (the configured file, the generated one, a registry's default) and the
engine hand documents around as :class:`LoadedPolicy`, so this module sits below all of them.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc._files import read_user_bytes
from grapharc.errors import GraphARCError

MAX_POLICY_BYTES = 4 * 1024 * 1024


class PolicyLoadError(GraphARCError):
    """A policy document that cannot be read or parsed."""


@dataclass(frozen=True)
class LoadedPolicy:
    """A policy document and where it came from."""

    source: str
    origin: str
    document: dict[str, Any]
    digest: str
    generated_now: bool = False


def document_digest(document: Mapping[str, Any]) -> str:
    """sha256 of a document's canonical JSON, for documents that never were a file."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def read_policy_bytes(path: Path) -> bytes:
    """The bytes of a policy file, refusing directories, huge files and binary data."""
    return read_user_bytes(path, what="policy file", limit=MAX_POLICY_BYTES, error=PolicyLoadError,
                           kind="TOML")


def parse_policy_text(raw: bytes, where: str) -> dict[str, Any]:
    """Decode TOML, naming the file, line and column on failure."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PolicyLoadError(f"policy file {where} is not UTF-8 (byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise PolicyLoadError(f"policy file {where} is not valid TOML: {exc}") from exc
    except RecursionError:
        raise PolicyLoadError(f"policy file {where} nests too deeply") from None


def load_policy_file(path: Path, source: str) -> LoadedPolicy:
    """Parse a TOML policy file; the digest is over the exact bytes read."""
    raw = read_policy_bytes(path)
    document = parse_policy_text(raw, str(path))
    return LoadedPolicy(source, str(path), document, hashlib.sha256(raw).hexdigest())
