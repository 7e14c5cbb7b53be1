"""What a demo stage reports: the checks its gate pins, its key state, its run, and a human view.

A stage is *demonstrated* when every check holds; the CLI exits 0 then and 1 otherwise.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grapharc.examples.demo_runs import RunRecord

_WIDTH = 88
_LABEL = 10


@dataclass(frozen=True)
class Check:
    """One property the stage demonstrates, stated as it should hold, and whether it did."""

    claim: str
    ok: bool


Warn = Callable[[str], None]
"""Where a stage's runner says what the person should know before anything runs (a reviewer on
the author's vendor, say)."""


def no_warning(_warning: str) -> None:
    """A runner's ``warn`` when nobody is listening (tests, the Python API)."""


@dataclass(frozen=True)
class StageOutcome:
    """The result of one demo run, as a JSON document or a short readable summary.

    ``warnings`` are what the runner told its ``Warn`` callback before the run (the CLI prints them
    on stderr then, so a run that fails still warned); the JSON document carries them too.
    """

    stage: str
    title: str
    lesson: str
    status: str
    summary: str
    run: RunRecord
    checks: tuple[Check, ...]
    state: dict[str, Any]
    facts: tuple[tuple[str, str], ...] = ()
    stop_reason: str | None = None
    model: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    hints: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def demonstrated(self) -> bool:
        """True when every check held."""
        return all(check.ok for check in self.checks)

    def document(self) -> dict[str, Any]:
        """The ``--json`` result document."""
        return {
            "ok": self.demonstrated, "stage": self.stage, "title": self.title,
            "status": self.status, "stop_reason": self.stop_reason, "summary": self.summary,
            **self.run.identity(), "model": self.model,
            "run": {"status": self.run.status, "stop_reason": self.run.stop_reason,
                    "iterations": self.run.iterations, "tokens": self.run.tokens,
                    "steps": self.run.steps()},
            "checks": [{"claim": check.claim, "ok": check.ok} for check in self.checks],
            "state": self.state, **self.details, "hints": list(self.hints),
            "warnings": list(self.warnings),
        }

    def render(self) -> str:
        """The human view: what the stage shows, what happened, what was checked, where the run is."""
        lines = [f"{self.stage}: {self.title}", ""]
        lines += textwrap.wrap(self.lesson, _WIDTH, initial_indent="  ", subsequent_indent="  ")
        lines.append("")
        if self.model is not None:
            lines.append(_line("model", self.model))
        lines += [_line(label, value) for label, value in self.facts]
        lines.append("")
        for index, check in enumerate(self.checks):
            mark = "[ok]  " if check.ok else "[FAIL]"
            lines.append(_line("checks" if index == 0 else "", f"{mark} {check.claim}"))
        verdict = "demonstrated" if self.demonstrated else "NOT demonstrated"
        lines += [_line("result", f"{verdict}: {self.summary}"), "",
                  _line("trace", str(self.run.trace)),
                  _line("run", f"{self.run.run_id}  (thread {self.run.thread_id}, "
                               f"attempt {self.run.attempt})"),
                  _line("see also", f"grapharc metrics {shlex.quote(str(self.run.trace))} "
                                    f"{self.run.run_id}")]
        lines += [_line("next" if index == 0 else "", hint) for index, hint in enumerate(self.hints)]
        return "\n".join(lines)


def _line(label: str, value: str) -> str:
    prefix = f"{label:<{_LABEL}}: " if label else " " * (_LABEL + 2)
    return prefix + value
