"""A clear error for ``import grapharc.<plugin>`` when that plugin is not installed, and how to get it.

Without this, importing a plugin subpackage that is absent fails with a bare
"No module named 'grapharc.gateway'"; the finder below runs last on
``sys.meta_path`` and names the distribution that provides the module instead.
:func:`install_hint` is the one phrasing of "how to install X" every hint uses:
nothing is on PyPI yet, so it says how to install from this repository.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec

PLUGIN_PACKAGES: dict[str, str] = {
    "grapharc.gateway": "grapharc-gateway",
    "grapharc.tools": "grapharc-tools",
    "grapharc.server": "grapharc-server",
    "grapharc.memory.sqlite": "grapharc-memory-sqlite",
    "grapharc.memory.ladybug": "grapharc-memory-ladybug",
    "grapharc.postgres": "grapharc-postgres",
    "grapharc.mcp": "grapharc-mcp",
}

COMMAND_PROVIDERS: dict[str, str] = {
    "serve": "grapharc-server",
    "db": "grapharc-postgres",
    "mcp": "grapharc-mcp",
}
"""The commands GraphARC's own plugins add, by name: ``grapharc serve`` without grapharc-server
names the distribution instead of Click's bare "No such command"."""

STORE_PROVIDERS: dict[tuple[str, str], str] = {
    ("sqlite", "claims"): "grapharc-memory-sqlite",
    ("sqlite", "artifacts"): "grapharc-memory-sqlite",
    ("sqlite", "items"): "grapharc-memory-sqlite",
    ("ladybug", "claims"): "grapharc-memory-ladybug",
}
"""The stores GraphARC's own plugins serve, by (scheme, kind); the PostgreSQL schemes serve every
kind (``store_provider``)."""

POSTGRES_SCHEMES = ("postgresql", "postgres")


def store_provider(scheme: str, kind: str | None) -> str | None:
    """The GraphARC distribution that serves ``scheme`` (for ``kind``, if given), or None."""
    if scheme in POSTGRES_SCHEMES:
        return "grapharc-postgres"
    providers = {distribution for (known, served), distribution in STORE_PROVIDERS.items()
                 if known == scheme and kind in (None, served)}
    return providers.pop() if len(providers) == 1 else None


def install_hint(distribution: str, extra: str = "") -> str:
    """How to install ``distribution`` (with an optional extra) from a checkout of the repository."""
    if extra:
        return (f"{distribution} is not on PyPI yet; from a checkout of the GraphARC repository: "
                f"pip install './{distribution}[{extra}]'")
    wheel = distribution.replace("-", "_")
    return (f"{distribution} is not on PyPI yet; from a checkout of the GraphARC repository: "
            f"pip install ./{distribution} (or make wheels, then pip install dist/{wheel}-*.whl)")


class MissingPluginFinder:
    """Meta-path finder of last resort for GraphARC plugin packages."""

    @classmethod
    def find_spec(cls, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        distribution = PLUGIN_PACKAGES.get(fullname)
        if distribution is None:
            return None
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: it is provided by the {distribution} distribution; "
            f"{install_hint(distribution)}",
            name=fullname,
        )


def install_missing_plugin_hint() -> None:
    """Append the finder once; other finders always get the first chance."""
    if not any(finder is MissingPluginFinder for finder in sys.meta_path):
        sys.meta_path.append(MissingPluginFinder)
