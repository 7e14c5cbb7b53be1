"""An agent under a policy document: each tool call allowed, asked for, or denied by a rule.

A scripted model (free, the same every run) reads a note, tries the shell, writes a summary
and answers. ``policy.toml`` allows reads, asks before writes (an approver function answers
here; in a session a person would) and denies ``run_command``: a denied tool is never offered
to the model, and calling it anyway is refused with the rule's id. Each call's decision and
outcome is read back from the trace.

Run it from the repository root after ``make install`` (needs grapharc-tools):

    .venv/bin/python examples/agent_with_policy.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from grapharc.decisions.approval import ApprovalRequest
from grapharc.harness.report import agent_document, thread_events
from grapharc.harness.run import run_agent
from grapharc.harness.setup import AgentSettings
from grapharc.models import get_model

POLICY = """\
version = "1"
description = "read anything, ask before writing, never the shell"

[[rules]]
id = "reads"
resource = "tool"
action = "allow"
tool = "read_*"

[[rules]]
id = "writes"
resource = "tool"
action = "ask"
tool = "write_*"

[[rules]]
id = "no-shell"
resource = "tool"
action = "deny"
tool = "run_command"
reason = "no shell in this workspace"
"""

SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
    {"tool_calls": [{"name": "run_command", "args": {"argv": ["rm", "notes.txt"]}}]},
    {"tool_calls": [{"name": "write_file", "args": {"path": "summary.txt",
                                                     "content": "checkout is slow: stale cache\n"}}]},
    "Wrote summary.txt: the checkout is slow because of a stale cache.",
]


def approve(request: ApprovalRequest) -> bool:
    """The approver an ``ask`` goes to: it approves, and says what it was asked."""
    print(f"asked: {request.question} -> approved")
    return True


def main(folder: Path) -> None:
    """Run the agent on a workspace inside ``folder`` and print each governed tool call."""
    workspace = folder / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("checkout slow since the cache deploy\n")
    policy = folder / "policy.toml"      # outside the workspace, so the agent cannot edit it
    policy.write_text(POLICY)
    trace = folder / "agent.jsonl"
    settings = AgentSettings(task="summarise notes.txt into summary.txt", workspace=str(workspace),
                             model="mock/policy-example", policy=str(policy), max_steps=8)
    model = get_model("mock/policy-example", responses=SCRIPT, follow_conversation=True)
    values = run_agent(settings, trace=trace, thread_id="policy-example", model=model,
                       approver=approve)
    document = agent_document(values, thread_events(trace, "policy-example"), thread="policy-example")
    for call in document["tool_calls"]:
        print(f"{call['tool']:<12} {call['decision']:<6} rule={call['rule_id']} "
              f"outcome={call['outcome'] or 'not run'}  {call['reason'] or ''}")
    print("answer:", document["answer"])
    print("summary.txt:", (workspace / "summary.txt").read_text().strip())
    print("notes.txt still there:", (workspace / "notes.txt").exists())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="grapharc-agent-example-") as scratch:
        main(Path(scratch))
