"""Policy sources: a ``--policy`` flag, a ``grapharc.toml``, or the registry's default.

Each source is registered through the policy-source hook with a precedence;
:func:`resolve_policy` asks them in descending precedence and the first that
has a policy supplies it, named as the provenance (``policy_source``).
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError


class PolicyLoadError(GraphARCError):
    """A policy document that cannot be read or parsed."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policy sources may consult for one run."""

    flag: Path | None = None
    config_path: Path | None = None
    config: dict[str, Any] = field(default_factory=dict)
    registry_default: dict[str, Any] | None = None
    registry_name: str = ""


@dataclass(frozen=True)
class LoadedPolicy:
    """A policy document and where it came from."""

    source: str
    origin: str
    document: dict[str, Any]
    digest: str


def load_policy_file(path: Path, source: str) -> LoadedPolicy:
    """Parse a TOML policy file, naming the file and the error on failure."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PolicyLoadError(f"cannot read policy file {path}: {exc.strerror or exc}") from exc
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyLoadError(f"policy file {path} is not valid TOML: {exc}") from exc
    return LoadedPolicy(source, str(path), document, hashlib.sha256(raw).hexdigest())


def from_flag(context: PolicyContext) -> LoadedPolicy | None:
    """The file named by ``--policy``, when one was given."""
    return load_policy_file(context.flag, "flag") if context.flag is not None else None


def from_config(context: PolicyContext) -> LoadedPolicy | None:
    """``policy = "..."`` in grapharc.toml, resolved against the config file's folder."""
    named = context.config.get("policy")
    if named is None or context.config_path is None:
        return None
    return load_policy_file((context.config_path.parent / str(named)).resolve(), "config")


def from_registry_default(context: PolicyContext) -> LoadedPolicy | None:
    """The default the registry ships with its kinds (for the stdlib: deny apply_change)."""
    document = context.registry_default
    if document is None:
        return None
    digest = hashlib.sha256(repr(sorted(document.items())).encode()).hexdigest()
    return LoadedPolicy("registry-default", context.registry_name or "registry", document, digest)


def resolve_policy(context: PolicyContext) -> LoadedPolicy | None:
    """The policy of the highest-precedence source that has one, or ``None``."""
    from grapharc.plugins import registry, resolve_factory

    sources = sorted(registry("policy_sources").values(), key=lambda e: -e.item.precedence)
    for entry in sources:
        loaded = resolve_factory(entry.item.load)(context)
        if loaded is not None:
            return loaded
    return None
