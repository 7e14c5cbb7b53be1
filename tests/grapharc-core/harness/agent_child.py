"""A separate process driving the harness's agent graph, for the kill and approval tests.

``python agent_child.py WORKSPACE DIR OP [ARGS]``: OP ``run THREAD`` / ``resume THREAD`` drive a
checkpointed agent (SQLite at DIR/cp.db, trace at DIR/trace.jsonl) that appends a note and then
calls ``die_once`` (a read-only crash device; ``run-midway`` / ``resume-midway``: a command the
process dies inside); ``session-start THREAD`` / ``session-approve THREAD APPROVAL DECISION`` drive
an agent in a session at DIR whose policy asks before ``append_note``. Prints JSON.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agent_tools import APPEND, DIE, DIE_MIDWAY, READ
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc.harness.agent import AgentNode
from grapharc.harness.permissions import PermissionPolicy
from grapharc.harness.tools import ToolRegistry
from grapharc.session import SessionManager
from grapharc.testing import ScriptedChatModel


class ConversationModel(ScriptedChatModel):
    """Replies from where the conversation is, not from a position: so a new process that
    resumes the thread gets the same replies the killed one would have."""

    plan: list[Any] = []  # noqa: RUF012 - pydantic copies field defaults

    def _next_reply(self, messages: list[BaseMessage]) -> AIMessage:
        answered = sum(isinstance(m, ToolMessage) for m in messages)
        rounds = [len(r.tool_calls) if isinstance(r, AIMessage) else 0 for r in self.plan]
        done, index = 0, 0
        while index < len(self.plan) and done + rounds[index] <= answered and rounds[index]:
            done += rounds[index]
            index += 1
        reply = self.plan[min(index, len(self.plan) - 1)]
        return reply.model_copy() if isinstance(reply, AIMessage) else AIMessage(content=reply)


def calls(*pairs: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"c{i}"}
                                             for i, (n, a) in enumerate(pairs)])


def killed_agent(workspace: str, midway: bool) -> AgentNode:
    model = ConversationModel(plan=[calls(("append_note", {"name": "todo", "text": "once"}),
                                          ("die_once", {"marker": "boom"})), "done"])
    return AgentNode(model, ToolRegistry([APPEND, DIE_MIDWAY if midway else DIE, READ]), workspace=workspace,
                     permissions=PermissionPolicy.from_flags(allow=["*"]), name="killer")


def asking_agent(workspace: str) -> AgentNode:
    model = ConversationModel(plan=[calls(("append_note", {"name": "todo", "text": "approved"})), "done"])
    return AgentNode(model, ToolRegistry([APPEND, READ]), workspace=workspace, name="asker",
                     permissions=PermissionPolicy.from_flags(allow=["*"], ask=["append_note"]))


def main(workspace: str, directory: str, op: str, *args: str) -> None:
    folder = Path(directory)
    if op.startswith(("run", "resume")):
        graph = killed_agent(workspace, op.endswith("midway")).graph()
        graph.trace = folder / "trace.jsonl"
        saver = SqliteSaver(sqlite3.connect(str(folder / "cp.db"), check_same_thread=False))
        compiled = graph.compile(checkpointer=saver)
        out = compiled.invoke({"task": "note"} if op.startswith("run") else None,
                              {"configurable": {"thread_id": args[0]}})
        print(json.dumps({"status": out["status"], "stop_reason": out["stop_reason"]}))
        return
    manager = SessionManager(folder, lease_seconds=5.0)
    graph = asking_agent(workspace).graph()
    graph.trace = folder / "trace.jsonl"
    manager.register(graph)
    if op == "session-start":
        session = manager.start("asker", {"task": "note"}, thread_id=args[0])
    else:
        session = manager.resume(args[0], args[1], args[2], decider="ops")
    print(json.dumps({"status": session.status,
                      "approvals": [a.to_dict() for a in manager.approvals(args[0])]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
