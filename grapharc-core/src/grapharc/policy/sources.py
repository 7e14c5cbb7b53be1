"""Policy sources: ``--policy``, ``GRAPHARC_POLICY``, grapharc.toml, a generated file, the registry.

Each source is registered through the policy-source hook with a precedence
(flag 40, env 35, config 30, generated 20, registry-default 10);
:func:`resolve_policy` asks them in descending precedence and the first that
has a policy supplies it, named as the provenance (``policy_source``).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc._files import read_user_bytes
from grapharc.errors import GraphARCError

MAX_POLICY_BYTES = 4 * 1024 * 1024


class PolicyLoadError(GraphARCError):
    """A policy document that cannot be read or parsed."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policy sources may consult for one run.

    ``flag`` / ``env`` are already-resolved paths; ``config`` is the
    ``[grapharc]`` table of the config file at ``config_path``. ``model`` (a
    chat model) and ``workdir`` let the generated source write a first policy.
    """

    flag: Path | None = None
    env: Path | None = None
    config_path: Path | None = None
    config: dict[str, Any] = field(default_factory=dict)
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


def from_flag(context: PolicyContext) -> LoadedPolicy | None:
    """The file named by ``--policy``, when one was given."""
    return load_policy_file(context.flag, "flag") if context.flag is not None else None


def from_env(context: PolicyContext) -> LoadedPolicy | None:
    """The file named by ``GRAPHARC_POLICY``, when set."""
    return load_policy_file(context.env, "env") if context.env is not None else None


def from_config(context: PolicyContext) -> LoadedPolicy | None:
    """``policy = "..."`` in grapharc.toml, resolved against the config file's folder."""
    named = context.config.get("policy")
    if named is None or context.config_path is None:
        return None
    return load_policy_file((context.config_path.parent / str(named)).resolve(), "config")


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
        loaded = resolve_factory(entry.item.load)(context)
        if loaded is not None:
            return loaded
    return None
