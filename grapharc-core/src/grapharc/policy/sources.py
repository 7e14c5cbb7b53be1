"""Policy sources: the configured file, a generated file, the registry's default.

Each source is registered through the policy-source hook with a precedence
(config 30, generated 20, registry-default 10); :func:`resolve_policy` asks them
in descending precedence and the first that has a policy supplies it, named as
the provenance (``policy_source``). Which of ``--policy``, ``GRAPHARC_POLICY``
and ``policy = ...`` in grapharc.toml names the configured file is not decided
here: :mod:`grapharc.config` resolves the ``policy`` setting like every other
(flag > env > file), and the config source reports the layer that won as
``flag``, ``env`` or ``config``.
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
from grapharc.config import Setting
from grapharc.errors import GraphARCError

MAX_POLICY_BYTES = 4 * 1024 * 1024


class PolicyLoadError(GraphARCError):
    """A policy document that cannot be read or parsed."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policy sources may consult for one run.

    ``configured`` is the ``policy`` setting as grapharc.config resolved it (an
    absolute path and the layer that supplied it), or None when no layer set one.
    ``model`` (a chat model) and ``workdir`` let the generated source write a
    first policy.
    """

    configured: Setting | None = None
    registry_default: dict[str, Any] | None = None
    registry_name: str = ""
    model: Any = None
    model_name: str = ""
    workdir: Path | None = None
    catalog: tuple[dict[str, Any], ...] = ()


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


SOURCE_OF_LAYER = {"flag": "flag", "env": "env", "file": "config"}


def from_config(context: PolicyContext) -> LoadedPolicy | None:
    """The file the resolved ``policy`` setting names, provenance named after the layer that won."""
    setting = context.configured
    if setting is None:
        return None
    return load_policy_file(Path(setting.value), SOURCE_OF_LAYER.get(setting.source, setting.source))


def from_generated(context: PolicyContext) -> LoadedPolicy | None:
    """``.grapharc/generated-policy.toml``: read if present, else written once when a model exists."""
    if context.workdir is None:
        return None
    from grapharc.policy.generate import GENERATED_PATH, generate_policy_file

    path = context.workdir / GENERATED_PATH
    if path.exists():
        return load_policy_file(path, "generated")
    if context.model is None:
        return None
    generate_policy_file(path, context.model, context.model_name, list(context.catalog))
    loaded = load_policy_file(path, "generated")
    return LoadedPolicy(loaded.source, loaded.origin, loaded.document, loaded.digest, True)


def from_registry_default(context: PolicyContext) -> LoadedPolicy | None:
    """The default the registry ships with its kinds (for the stdlib: deny apply_change)."""
    document = context.registry_default
    if document is None:
        return None
    return LoadedPolicy("registry-default", context.registry_name or "registry", document,
                        document_digest(document))


def resolve_policy(context: PolicyContext) -> LoadedPolicy | None:
    """The policy of the highest-precedence source that has one, or ``None``."""
    from grapharc.plugins import registry, resolve_factory

    sources = sorted(registry("policy_sources").values(), key=lambda e: -e.item.precedence)
    for entry in sources:
        loaded: LoadedPolicy | None = resolve_factory(entry.item.load, plugin=entry.distribution)(context)
        if loaded is not None:
            return loaded
    return None
