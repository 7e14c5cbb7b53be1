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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.config.settings import Setting
from grapharc.policy.files import LoadedPolicy, document_digest, load_policy_file


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
