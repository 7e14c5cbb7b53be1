"""A client's ``goto`` and ``update`` for the turn that carries a thread on, and who asked.

The turn applies them as LangGraph applies a ``Command``'s, once the thread's first settling
shows where it stands: checked there against the graph as declared
(``grapharc.runtime.directed``) and recorded on the thread's trail (kind ``directed``: what was
asked, the nodes the thread stood at, who asked) under the turn's lease before the first pass.
A turn that dies before its first pass has applied them does not apply them on recovery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Directive:
    """The nodes to go to and the state update a client asked for, and who asked."""

    by: str
    goto: tuple[str, ...] = ()
    update: Mapping[str, Any] | None = field(default=None)

    def detail(self, at: tuple[str, ...]) -> dict[str, Any]:
        """What the trail records, the thread standing at ``at``."""
        return {"by": self.by, "goto": list(self.goto), "update": dict(self.update or {}) or None,
                "at": list(at)}
