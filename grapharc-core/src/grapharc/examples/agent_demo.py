"""``grapharc demo agent``: a scripted model fixes a failing test, every tool call governed.

A throwaway workspace holds ``calc.py`` (``add`` subtracts) and ``test_calc.py``. The scripted
model looks around, runs the test (``run_command`` is *asked* for, and a scripted approver
approves, shown), tries to overwrite the file with ``write_file`` (*denied*: the tool was never
shown to it) and to read outside the workspace (refused by the tool itself), then fixes the bug
with ``edit_file`` and runs the test again. An evidence check the model cannot influence re-runs
the test before the answer may leave. The seven tools come from grapharc-tools. Nothing of the
temporary workspace reaches stdout, so the output is the same on every run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

from grapharc.decisions.approval import ApprovalRequest
from grapharc.examples.demo_support import DemoInputError

SEVEN_TOOLS = ("read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "run_command")
ALLOW = ("read_file", "list_dir", "glob", "grep", "edit_file")
ASK = ("run_command",)
DENY = ("write_file",)
CALC = "def add(a, b):\n    return a - b\n"
TEST = ("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")
TASK = "test_calc fails: find the bug and fix it, then show the test passes."
ANSWER = "Fixed add() in calc.py: it subtracted instead of adding. test_calc passes now."


def _test_argv() -> list[str]:
    """The test command (``-B``: no bytecode cache, which a same-second, same-size edit would fool)."""
    return [sys.executable, "-B", "-m", "unittest", "-q", "test_calc"]


def _call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "args": args}]}


def script() -> list[Any]:
    """What the scripted model says, one reply per turn."""
    return [_call("list_dir", path="."), _call("read_file", path="test_calc.py"),
            _call("run_command", argv=_test_argv()), _call("read_file", path="calc.py"),
            _call("write_file", path="calc.py", content=CALC.replace("-", "+")),
            _call("read_file", path="../secrets.txt"),
            _call("edit_file", path="calc.py", old="return a - b", new="return a + b"),
            _call("run_command", argv=_test_argv()), ANSWER]


@dataclass(frozen=True)
class AgentDemo:
    """What the demo did: its document (for --json) and its lines (for people)."""

    document: dict[str, Any]
    lines: tuple[str, ...]

    @property
    def demonstrated(self) -> bool:
        return bool(self.document["ok"])


def test_passes(answer: str, workspace: Path) -> tuple[bool, str]:
    """The evidence check: the harness runs the test itself; the model's word is not enough."""
    done = subprocess.run(_test_argv(), cwd=workspace, capture_output=True, timeout=60, check=False)  # noqa: S603 -- the demo's own fixed argv, no shell
    return done.returncode == 0, f"test_calc exit code {done.returncode} when the harness ran it"


def run_agent_demo(trace: Path) -> AgentDemo:
    """Run the demo in a temporary workspace; the trace is appended to ``trace``."""
    from grapharc._missing import install_hint
    from grapharc.harness.report import agent_document, thread_events
    from grapharc.harness.run import run_agent
    from grapharc.harness.setup import AgentSettings
    from grapharc.models import get_model
    from grapharc.plugins import registry

    missing = [name for name in SEVEN_TOOLS if name not in registry("tools")]
    if missing:
        raise DemoInputError(f"demo agent needs the grapharc-tools plugin for {', '.join(missing)}",
                             hint=install_hint("grapharc-tools"))
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    model = get_model("mock/demo-agent", responses=script(), follow_conversation=True)
    thread = f"demo-agent-{uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="grapharc-demo-agent-") as scratch:
        workspace = Path(scratch) / "workspace"
        workspace.mkdir()
        (workspace / "calc.py").write_text(CALC)
        (workspace / "test_calc.py").write_text(TEST)
        settings = AgentSettings(task=TASK, workspace=str(workspace), model="mock/demo-agent",
                                 allow=ALLOW, ask=ASK, deny=DENY, max_steps=12)
        values = run_agent(settings, trace=trace, thread_id=thread, model=model, approver=approver,
                           evidence=test_passes)
        fixed = (workspace / "calc.py").read_text() == CALC.replace("-", "+")
        outside = (Path(scratch) / "secrets.txt").exists()
    document = agent_document(values, thread_events(trace, thread), thread=thread)
    story = _story(values, document["tool_calls"])
    checks = [
        ("the agent answered and the harness saw the test pass", document["ok"]),
        ("calc.py was fixed by edit_file", fixed),
        ("write_file was denied and never shown to the model",
         all("write_file" not in offered for offered in model.offered)
         and _decisions(document, "write_file") == [("deny", None)]),
        ("reading ../secrets.txt was refused by the tool itself (WorkspaceEscape)",
         not outside and _refused_escape(document)),
        ("every run_command was asked for and approved before it ran",
         len(asked) == 2 and _decisions(document, "run_command") == [("ask", "ok")] * 2
         and all(call["approval"] == "approved" for call in document["tool_calls"]
                 if call["tool"] == "run_command")),
    ]
    document.update(stage="agent", trace=str(trace), story=story,
                    approvals=[request.question for request in asked],
                    asked=[_asked(request) for request in asked],
                    checks=[{"claim": claim, "ok": ok} for claim, ok in checks],
                    ok=all(ok for _, ok in checks))
    return AgentDemo(document, tuple(_render(document, checks)))


def _decisions(document: dict[str, Any], tool: str) -> list[tuple[str, str | None]]:
    return [(call["decision"], call["outcome"]) for call in document["tool_calls"] if call["tool"] == tool]


def _refused_escape(document: dict[str, Any]) -> bool:
    return any(call["tool"] == "read_file" and call["outcome"] == "error"
               and ".WorkspaceEscape: " in str(call["error"]) for call in document["tool_calls"])


def _story(values: dict[str, Any], calls: list[dict[str, Any]]) -> list[str]:
    """One line per tool call: what was asked, what the rules said, what came of it."""
    results = {str(m.tool_call_id): str(m.content) for m in values.get("messages", []) if m.type == "tool"}
    asked = [call for m in values.get("messages", []) if m.type == "ai" for call in m.tool_calls]
    lines = []
    for number, (call, record) in enumerate(zip(asked, calls, strict=False), start=1):
        decision = record["decision"] + (f" -> {record['approval']}" if record["approval"] else "")
        lines.append(f"{number:>2}. {_shown_call(call):<46} {decision:<16} {_result(results[call['id']])}")
    return lines


def _asked(request: ApprovalRequest) -> str:
    """An approval request as the demo shows it (the interpreter's path left out)."""
    call = {"name": request.subject, "args": request.arguments or {}}
    return f"allow {_shown_call(call)}? (rule {request.rule_id})"


def _shown_call(call: dict[str, Any]) -> str:
    args = dict(call["args"])
    if call["name"] == "run_command":
        argv = ["python" if arg == sys.executable else arg for arg in args["argv"]]
        return f"run_command {' '.join(argv)}"
    return f"{call['name']} {args.get('path', '')}"


def _result(text: str) -> str:
    """What came of a call, without anything of the temporary workspace's path."""
    if text.startswith("error: "):
        error = text[len("error: "):].splitlines()[0]
        kind = re.match(r"(\w+(Error|Escape|Violation)): ", error)
        return "refused: " + (kind.group(1) if kind else error)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "exit_code" in data:
        return f"exit code {data['exit_code']}"
    return f"ok ({len(text)} chars)"


def _render(document: dict[str, Any], checks: list[tuple[str, bool]]) -> list[str]:
    verdict = "demonstrated" if document["ok"] else "NOT demonstrated"
    lines = ["agent: a scripted model fixes a failing test, every tool call governed", "",
             "  workspace : a temporary folder with calc.py (add() subtracts) and test_calc.py",
             f"  rules     : allow {', '.join(ALLOW)}; ask {', '.join(ASK)}; deny {', '.join(DENY)}",
             "  approver  : a scripted one, approving each run_command (shown)",
             f"  task      : {TASK}", "", *document["story"], ""]
    lines += [f"  asked     : {question} -> approved" for question in document["asked"]]
    lines += [f"  answer    : {document['answer']}",
              f"  stopped   : {document['stop_reason']} after {document['steps']} model steps", ""]
    lines += [f"  {'[ok]  ' if ok else '[FAIL]'} {claim}" for claim, ok in checks]
    lines += ["", f"  result    : {verdict}", f"  trace     : {document['trace']}"]
    return lines
