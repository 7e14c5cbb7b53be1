"""How ``grapharc mcp serve`` answers a tool call: a governed run, a thread's status, the open
approvals, or a tool error naming what is wrong with the call.

A run is ``SessionManager.astart``, as ``grapharc serve``'s threads API and ``grapharc demo approval
run`` drive one: its input is checked against the graph's state before anything is written, then
the first turn runs under the graph's budgets (metered thread-wide), policy and trace, claimed
under a lease and checkpointed in the ``--sessions`` store, until the thread completes, fails or
pauses. A paused thread is not kept in memory: whoever decides its approval elsewhere carries it
on from the store. A run that fails (over budget, a node raising) is answered with its thread's
document, status ``failed`` and the error, as an ``isError`` result: the call did not do what it
asked. Bad input (an unknown tool, arguments that fail the graph's state or the reader's
schema, an unknown thread) is an ``isError`` result with GraphARC's message and hint, never a
protocol error or a traceback, and the server carries on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import uuid4

import mcp.types as types
from pydantic import ValidationError

from grapharc.errors import GraphARCError
from grapharc.mcp.serving.documents import pending_documents, thread_document
from grapharc.mcp.serving.tools import PENDING_TOOL, STATUS_TOOL, PendingQuery, ThreadQuery, offered_tools
from grapharc.plugins.foreign import FOREIGN_FAILURES
from grapharc.session.errors import UnknownSessionError
from grapharc.session.manager import SessionManager
from grapharc.session.records import FAILED
from grapharc.stores import offload

Query = TypeVar("Query", ThreadQuery, PendingQuery)


class UnknownToolError(GraphARCError):
    """A call names a tool (a graph) this server does not offer."""


class ToolArgumentsError(GraphARCError):
    """A reader's arguments do not fit its input schema."""


class GraphTools:
    """The tools served over one SessionManager (whose graphs are registered), and their calls."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager
        self.tools = offered_tools(manager)

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """The result of calling tool ``name``: its document, or a tool error saying what is wrong."""
        try:
            document, failed = await self._answer(name, dict(arguments or {}))
        except GraphARCError as exc:
            return refusal(exc)
        text = json.dumps(document, ensure_ascii=False, sort_keys=True)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=document,
                                    is_error=failed)

    async def _answer(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The call's document, and whether it is a run that failed."""
        if name == STATUS_TOOL:
            thread = checked(ThreadQuery, name, arguments).thread_id
            return await offload.to_thread(thread_document, self.manager, thread), False
        if name == PENDING_TOOL:
            query = checked(PendingQuery, name, arguments)
            pending = await offload.to_thread(pending_documents, self.manager, query.thread_id)
            return {"pending": pending}, False
        if name not in self.tools:
            graphs = ", ".join(self.manager.graphs.names())
            raise UnknownToolError(f"no tool {name!r} here: this server runs the graphs {graphs}, and "
                                   f"offers {STATUS_TOOL} and {PENDING_TOOL}",
                                   hint="list the tools (tools/list) and call one of them")
        document = await self._run(name, arguments)
        return document, document["status"] == FAILED

    async def _run(self, graph: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Start a run of ``graph``; its thread's document once it pauses or ends. The turn records
        a failure on the thread and raises it: once the thread exists, its document says it."""
        thread_id = uuid4().hex[:12]
        try:
            await self.manager.astart(graph, arguments, thread_id=thread_id)
        except FOREIGN_FAILURES:
            if not await offload.to_thread(self._exists, thread_id):
                raise  # refused before anything was written: the input, most likely
        return await offload.to_thread(thread_document, self.manager, thread_id)

    def _exists(self, thread_id: str) -> bool:
        """Whether the session store has thread ``thread_id``."""
        try:
            self.manager.get(thread_id)
        except UnknownSessionError:
            return False
        return True


def checked(model: type[Query], tool: str, arguments: dict[str, Any]) -> Query:
    """``arguments`` as ``tool``'s query, or ``ToolArgumentsError`` naming each field at fault."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        faults = "; ".join(f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                           for error in exc.errors(include_url=False))
        raise ToolArgumentsError(f"{tool}'s arguments do not fit its input schema: {faults}",
                                 hint="see the tool's inputSchema in tools/list") from None


def refusal(error: GraphARCError) -> types.CallToolResult:
    """A tool error carrying GraphARC's one-line message, its hint, and its code."""
    document = {"error": str(error), "code": error.code, **({"hint": error.hint} if error.hint else {})}
    text = str(error) + (f" ({error.hint})" if error.hint else "")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=document,
                                is_error=True)
