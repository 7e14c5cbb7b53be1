"""What ``grapharc plugins`` reports: every distribution, what it registered, and its errors."""

from __future__ import annotations

from typing import Any

from grapharc.plugins.facets import FACETS


def plugin_report() -> dict[str, Any]:
    """Fill every registry, then describe each distribution; a collision is reported, not raised."""
    from grapharc.plugins import DuplicateRegistrationError, get_host

    host = get_host()
    problems: list[str] = []
    for facet in FACETS:
        try:
            host.registry(facet)
        except DuplicateRegistrationError as exc:
            problems.append(str(exc))
    distributions = [record.as_dict() for record in host.records.values()]
    failed = [d for d in distributions if d["status"] in {"failed", "incompatible"}]
    return {"ok": not problems and not failed, "distributions": distributions,
            "problems": problems}


def render_plugin_report(document: dict[str, Any]) -> str:
    """The human view: one block per distribution."""
    lines: list[str] = []
    for dist in document["distributions"]:
        lines.append(f"{dist['name']} {dist['version']}  [{dist['status']}]  ({dist['module']})")
        for facet, names in dist["registered"].items():
            lines.append(f"    {facet:<15} {', '.join(names)}")
        lines.extend(f"    error: {error}" for error in dist["errors"])
    lines.extend(f"problem: {problem}" for problem in document["problems"])
    return "\n".join(lines)
