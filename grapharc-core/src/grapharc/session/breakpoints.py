"""Breakpoints a run asks for (LangGraph's ``interrupt_before`` / ``interrupt_after``): the turn stops
before or after the nodes named ("*": every node) and leaves the thread paused on no approval, with
the nodes due next in its checkpoint; continuing it (``SessionManager.acontinue``) runs on from
there. They hold for the turn that asks for them only, on top of the graph's gates."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

EVERY_NODE = "*"


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """The nodes a turn stops before and after (``EVERY_NODE`` alone: every one)."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def stream_options(self, gates: Iterable[str]) -> dict[str, Any]:
        """LangGraph's ``interrupt_before`` / ``interrupt_after`` for a pass: given at the call,
        they replace the compiled graph's, so the gated nodes stay in ``interrupt_before``."""
        before = EVERY_NODE if EVERY_NODE in self.before else sorted({*self.before, *gates})
        after = EVERY_NODE if EVERY_NODE in self.after else sorted(self.after)
        return {"interrupt_before": before or None, "interrupt_after": after or None}
