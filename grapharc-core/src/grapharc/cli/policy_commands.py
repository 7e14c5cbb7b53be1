"""The ``policy`` commands: ``check`` judges a policy document without running anything.

Exit 0: the document is valid; 1: it is not (every error named, with its place); 2: there was no
file to check. The judging is :mod:`grapharc.harness.policy_check`'s; this module prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from grapharc.cli.options import ReadableFile, argument
from grapharc.cli.output import ExitCode, JsonOption, emit, fail
from grapharc.errors import GraphARCError


def add_policy_commands(app: typer.Typer) -> None:
    """Add the ``policy`` group (``check``) to ``app``."""
    group = typer.Typer(name="policy", no_args_is_help=True,
                        help="Policy documents: check one before any agent or plan runs under it.")
    group.command("check")(check_command)
    app.add_typer(group, name="policy")


def check_command(
    file: Annotated[Path, argument("FILE", kind=ReadableFile("policy document"),
                                   help="The policy document (TOML) to check.")],
    as_json: JsonOption = False,
) -> None:
    """Check a policy document as an agent, plan or run would load it, running nothing: list each
    rule and what it covers, or name every error with its place. Exit 0 valid, 1 invalid, 2 no
    file to check."""
    from grapharc.harness.policy_check import check_policy

    try:
        report = check_policy(file)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(report.to_document(), as_json, render_check, ExitCode.OK if report.valid else ExitCode.NEGATIVE)


def render_check(document: dict[str, Any]) -> str:
    """A checked document for a terminal: its verdict, then its rules or its errors, then notes."""
    if not document["valid"]:
        lines = [f"policy {document['path']}: invalid, {len(document['errors'])} error(s)"]
        lines += [f"  {_place(problem)}: {problem['message']}" for problem in document["errors"]]
        return "\n".join(lines)
    about = f": {document['description']}" if document["description"] else ""
    lines = [f"policy {document['path']}: valid, version {document['version']}{about}",
             f"{len(document['rules'])} rule(s)"]
    width = max((len(rule["id"]) for rule in document["rules"]), default=0)
    for rule in document["rules"]:
        line = f"  {rule['id']:<{width}}  {rule['action']:<5}  {rule['covers']}"
        if "route" in rule:
            line += f" (route {rule['route']})"
        if rule["tenant"]:
            line += f" (tenant {rule['tenant']})"
        lines.append(line)
    for name, described in document["tool_sources"].items():
        lines += [f"[{name}] {line}" for line in described]
    lines += [f"note: {note}" for note in document["notes"]]
    return "\n".join(lines)


def _place(problem: dict[str, Any]) -> str:
    """Where a problem is: the key, then the rule's id and its line when known."""
    details = [f"rule {problem['rule_id']!r}" if problem["rule_id"] is not None else "",
               f"line {problem['line']}" if problem["line"] is not None else ""]
    shown = ", ".join(detail for detail in details if detail)
    return f"{problem['where']} ({shown})" if shown else problem["where"]
