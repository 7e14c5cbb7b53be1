"""``grapharc policy check``: a policy document judged without running anything.

The document is read and validated by the code an agent (or ``plan`` / ``run``) loads it with:
:func:`~grapharc.policy.files.load_policy_file`, the engine's schema check, and each installed tool
source's own ``check`` of its table (``[mcp]``), which starts and connects nothing. Every problem
is reported with its place (the key, the rule's id, the line of its ``[[rules]]`` header); a valid
document is described rule by rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc._files import not_regular
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.policy.engine import PolicyEngine, Problem, check_document
from grapharc.policy.files import LoadedPolicy, PolicyLoadError, load_policy_file
from grapharc.policy.schema import EdgeRuleDoc, NodeRuleDoc, SpendRuleDoc, ToolRuleDoc

_RULES_HEADER = "[[rules]]"


class PolicyPathError(ConfigurationError):
    """The path given to check names no policy file at all (missing, a directory, a device)."""


@dataclass
class PolicyCheck:
    """What checking one document found: its rules, what its tool-source tables configure, notes,
    and every problem (valid when there is none)."""

    path: str
    version: str = ""
    description: str = ""
    digest: str = ""
    rules: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_document(self) -> dict[str, Any]:
        """The JSON document ``grapharc policy check --json`` prints."""
        return {"ok": True, "valid": self.valid, "path": self.path, "version": self.version,
                "description": self.description, "digest": self.digest, "rules": self.rules,
                "tool_sources": self.sources, "notes": self.notes, "errors": self.problems}


def check_policy(path: Path) -> PolicyCheck:
    """Check the policy document at ``path``; raises PolicyPathError if there is no file to read."""
    _require_file(path)
    report = PolicyCheck(str(path))
    try:
        loaded = load_policy_file(path, "file")
    except PolicyLoadError as exc:
        report.problems.append({"where": "file", "rule_id": None, "line": None, "message": str(exc)})
        return report
    report.digest = loaded.digest
    checked, problems = check_document(loaded.document)
    lines = _rule_lines(path, loaded.document)
    report.problems += [_problem(problem, lines) for problem in problems]
    _check_sources(loaded, report)
    if checked is not None and report.valid:
        _describe(PolicyEngine.from_loaded(loaded), report)
    return report


def _require_file(path: Path) -> None:
    """Refuse a path that names no regular file: missing, unusable as a name, a directory, a device."""
    hint = "give the path of a TOML policy document"
    try:
        kind = not_regular(path.stat().st_mode)
    except FileNotFoundError:
        raise PolicyPathError(f"no policy file {path}", hint=hint) from None
    except (OSError, ValueError) as exc:  # a name too long, or holding a NUL byte
        raise PolicyPathError(f"cannot check {str(path)[:200]!r}: {getattr(exc, 'strerror', None) or exc}",
                              hint=hint) from None
    if kind:
        raise PolicyPathError(f"{path} is {kind}, not a policy file", hint=hint)


def _check_sources(loaded: LoadedPolicy, report: PolicyCheck) -> None:
    """Each tool-source table by its source's own check; a source that has none is noted."""
    from grapharc.harness.setup import policy_source_layers, source_layers
    from grapharc.plugins import registry, resolve_factory

    installed = registry("tool_sources")
    for name, layers in policy_source_layers(loaded).items():
        entry = installed[name]
        if entry.item.check is None:
            report.notes.append(f"[{name}] is read by {entry.distribution}, which cannot check it "
                                "without running it")
            continue
        try:
            report.sources[name] = list(resolve_factory(entry.item.check, plugin=entry.distribution)(
                source_layers(layers)))
        except GraphARCError as exc:
            report.problems.append({"where": f"[{name}]", "rule_id": None, "line": None, "message": str(exc)})


def _describe(engine: PolicyEngine, report: PolicyCheck) -> None:
    """The document's version, description and rules, and what it leaves ungoverned."""
    report.version, report.description = engine.version, engine.description
    for rule in engine.document.rules:
        described: dict[str, Any] = {"id": rule.id, "resource": rule.resource, "action": str(rule.action),
                                     "covers": _covers(rule), "tenant": rule.tenant, "reason": rule.reason}
        if isinstance(rule, ToolRuleDoc) and rule.action == "ask":
            described["route"] = rule.route
        report.rules.append(described)
    report.notes += engine.ungoverned()


def _covers(rule: NodeRuleDoc | EdgeRuleDoc | ToolRuleDoc | SpendRuleDoc) -> str:
    """What a rule applies to, in the document's own terms."""
    if isinstance(rule, NodeRuleDoc):
        return f"kind {rule.kind}"
    if isinstance(rule, EdgeRuleDoc):
        return f"edge {rule.source} -> {rule.target}"
    if isinstance(rule, ToolRuleDoc):
        return f"tool {rule.tool}"
    return "spend over " + ", ".join(f"{name} {value:g}" for name, value in rule.ceilings().items())


def _problem(problem: Problem, lines: list[int]) -> dict[str, Any]:
    """A schema problem, with the line of its rule's ``[[rules]]`` header where that is known."""
    index = problem.rule_index
    line = lines[index] if index is not None and index < len(lines) else None
    return {"where": problem.where, "rule_id": problem.rule_id, "line": line, "message": problem.message}


def _rule_lines(path: Path, document: dict[str, Any]) -> list[int]:
    """The line of each rule's ``[[rules]]`` header, when the document writes every rule as one
    (an inline ``rules = [...]`` has no header per rule: then none is known)."""
    text = path.read_text(encoding="utf-8")
    lines = [number for number, line in enumerate(text.splitlines(), 1)
             if line.split("#", 1)[0].strip() == _RULES_HEADER]
    rules = document.get("rules")
    return lines if isinstance(rules, list) and len(lines) == len(rules) else []
