"""What ``grapharc plugins`` (and the server's inventory) report: every distribution, what it
registered, and its errors. It reads only the plugin layer, so listing plugins imports no CLI."""

from __future__ import annotations

from typing import Any

from grapharc.plugins.facets import FACETS

HEALTHY = frozenset({"loaded", "disabled"})


def plugin_report() -> dict[str, Any]:
    """Fill every registry, then describe each distribution; ``ok`` is false if any plugin is not healthy.

    Commands appear only once the CLI has merged them (``grapharc plugins`` does).
    """
    from grapharc.plugins import get_host

    host = get_host()
    for facet in FACETS:
        host.registry(facet)
    distributions = [record.as_dict() for record in host.records.values()]
    return {"ok": all(d["status"] in HEALTHY for d in distributions), "distributions": distributions}


def render_plugin_report(document: dict[str, Any]) -> str:
    """The human view: one block per distribution."""
    lines: list[str] = []
    for dist in document["distributions"]:
        lines.append(f"{dist['name']} {dist['version']}  [{dist['status']}]  ({dist['module']})")
        for facet, names in dist["registered"].items():
            shown = _by_scheme(names) if facet == "stores" else names
            lines.append(f"    {facet:<15} {', '.join(shown)}")
        lines.extend(f"    error: {error}" for error in dist["errors"])
    return "\n".join(lines)


def _by_scheme(keys: list[str]) -> list[str]:
    """Store keys (``scheme:kind``) as one entry per scheme with its kinds: ``sqlite (claims, runs)``."""
    kinds: dict[str, list[str]] = {}
    for key in keys:
        scheme, _, kind = key.partition(":")
        kinds.setdefault(scheme, []).append(kind)
    return [f"{scheme} ({', '.join(sorted(found))})" for scheme, found in kinds.items()]
