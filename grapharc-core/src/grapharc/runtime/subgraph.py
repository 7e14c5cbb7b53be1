"""A compiled GraphARC used as a node of another: discipline on both sides of the boundary.

The subgraph runs inside the parent's run (same run id, meter and trace; its own nodes
check their own writes and trace under its own name), invoked from the hosting node so
LangGraph checkpoints it under the host's namespace and its interrupts bubble up. What
it hands back to the parent is only the shared fields it changed, and those are checked
against the hosting node's ``writes=`` like any node's output. A ``Command(graph=PARENT)``
from inside it is checked against the hosting node's allowlist and the parent's nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import ParentCommand

from grapharc.runtime.node import AsyncBody, Body, DeclaredNode
from grapharc.runtime.node_output import GraphFacts, Settler, check_parent_command

if TYPE_CHECKING:
    from grapharc.runtime.compiled import CompiledGraphARC


def subgraph_bodies(spec: DeclaredNode, facts: GraphFacts) -> tuple[Body | None, AsyncBody | None]:
    """The (sync, async) bodies of a node that hosts the compiled subgraph ``spec.fn``."""
    sub: CompiledGraphARC = spec.fn
    settle = Settler(spec.name, spec.writes, facts)
    shared = sorted(sub.contract.field_names & facts.contract.field_names)
    returned = sorted(sub.writable & facts.contract.field_names)

    def entry(view: Any) -> dict[str, Any]:
        return {name: getattr(view, name) for name in shared if hasattr(view, name)}

    def changed(sent: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        return {
            name: out[name]
            for name in returned
            if name in out and (name not in sent or out[name] != sent[name])
        }

    if sub.has_async:

        async def abody(view: Any, config: RunnableConfig) -> dict[str, Any]:
            sent = entry(view)
            try:
                return changed(sent, await sub.arun_nested(sent, config))
            except ParentCommand as bubble:
                check_parent_command(settle, bubble, view, config)
                raise

        return None, abody

    def body(view: Any, config: RunnableConfig) -> dict[str, Any]:
        sent = entry(view)
        try:
            return changed(sent, sub.run_nested(sent, config))
        except ParentCommand as bubble:
            check_parent_command(settle, bubble, view, config)
            raise

    return body, None
