"""``grapharc models [SPEC] [--check] [--json]``: what a spec resolves to, and what this machine reaches.

Without SPEC it lists every registered backend; with one it shows the backend,
model, vendor, capabilities and distribution the spec resolves to, without
building a model. ``--check`` asks each backend's factory for a probe: a factory
may offer ``probe()`` returning ``[{"name", "ok", "detail"}, ...]`` (key present,
endpoint answering, executable on PATH); a backend whose factory offers none is
reported unchecked rather than failed. Exit codes: 2 for a spec that cannot be
resolved, 1 when a check failed.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from grapharc.cli.output import JsonOption

SpecArgument = Annotated[str | None, typer.Argument(
    metavar="SPEC",
    help="A backend/model spec, e.g. openrouter/anthropic/claude-haiku-4.5 (default: list every backend).")]
CheckOption = Annotated[bool, typer.Option(
    "--check", help="Also check what this machine can reach: key present, endpoint answering, "
                    "executable on PATH.")]


def add_models_command(app: typer.Typer) -> None:
    """Register ``models`` on ``app``."""
    app.command("models")(models_command)


def models_command(spec: SpecArgument = None, check: CheckOption = False,
                   as_json: JsonOption = False) -> None:
    """Show what a model spec resolves to, or list every backend; --check tests reachability."""
    from grapharc.cli.output import ExitCode, emit, fail
    from grapharc.models import ModelSpecError, resolve_backend
    from grapharc.plugins import registry

    if spec is None:
        entries = registry("model_backends")
        backends = [_describe_backend(entries[name], check) for name in sorted(entries)]
        document: dict[str, Any] = {"ok": all(b.get("ready") is not False for b in backends),
                                    "backends": backends}
        render = _render_list
    else:
        try:
            resolved = resolve_backend(spec)
        except ModelSpecError as error:
            fail(error, as_json)
        entry = registry("model_backends")[resolved.backend]
        document = {**resolved.describe(), **_checks(entry, check)}
        document = {"ok": document.get("ready") is not False, **document}
        render = _render_spec
    emit(document, as_json, render, ExitCode.OK if document["ok"] else ExitCode.NEGATIVE)


def _describe_backend(entry: Any, check: bool) -> dict[str, Any]:
    info = entry.item
    return {"backend": info.prefix, "vendor": info.vendor, "capabilities": sorted(info.capabilities),
            "distribution": entry.distribution, "description": info.description,
            **_checks(entry, check)}


def _checks(entry: Any, check: bool) -> dict[str, Any]:
    """``{"ready": bool | None, "checks": [...]}`` when checking, else nothing."""
    if not check:
        return {}
    from grapharc.plugins import resolve_factory

    try:
        probe = getattr(resolve_factory(entry.item.factory, plugin=entry.distribution), "probe", None)
        checks = [dict(item) for item in probe()] if probe is not None else None
    except Exception as error:  # a broken plugin is reported as a failed check, not a crash
        checks = [{"name": "factory", "ok": False, "detail": f"{type(error).__name__}: {error}"}]
    if checks is None:
        return {"ready": None, "checks": []}
    return {"ready": all(item.get("ok") for item in checks), "checks": checks}


def _render_checks(document: dict[str, Any], indent: str) -> list[str]:
    if "ready" not in document:
        return []
    if document["ready"] is None:
        return [f"{indent}unchecked: this backend declares no probe"]
    return [f"{indent}{'ok  ' if item.get('ok') else 'FAIL'} {item.get('name')}: {item.get('detail')}"
            for item in document["checks"]]


def _render_list(document: dict[str, Any]) -> str:
    lines = []
    for backend in document["backends"]:
        lines.append(f"{backend['backend'] + '/':<14} {backend['vendor']:<12} "
                     f"{','.join(backend['capabilities']):<50} {backend['distribution']}")
        lines.extend(_render_checks(backend, "    "))
    return "\n".join(lines)


def _render_spec(document: dict[str, Any]) -> str:
    lines = [f"{document['spec']}",
             f"  backend       {document['backend']}",
             f"  model         {document['model']}",
             f"  vendor        {document['vendor']}",
             f"  capabilities  {', '.join(document['capabilities'])}",
             f"  distribution  {document['distribution']}"]
    if document.get("description"):
        lines.append(f"  description   {document['description']}")
    lines.extend(_render_checks(document, "  "))
    return "\n".join(lines)
