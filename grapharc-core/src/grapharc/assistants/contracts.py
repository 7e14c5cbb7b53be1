"""What an assistant store keeps and promises, so any backend registered for the ``assistants``
kind serves a server (``open_store("sqlite:DIR", kind="assistants")``,
``open_store("postgresql://HOST/DB", kind="assistants")``). ``grapharc.testing.assistant_store_kit``
pins what these docstrings promise.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from grapharc.assistants.records import Assistant, AssistantChange, AssistantVersion

Revise = Callable[["Assistant"], "AssistantVersion"]
"""Given an assistant as it stands, the content of its next version (its number is the store's)."""


@runtime_checkable
class AssistantStore(Protocol):
    """Created assistants, their versions and their change log. Every change is atomic across
    threads and processes and logged; an unknown assistant raises ``UnknownAssistantError``;
    nothing is written when a call raises."""

    def create(self, first: AssistantVersion, *, if_exists: str = "raise") -> tuple[Assistant, bool]:
        """Keep a new assistant whose version 1 is ``first``; it and True. If its id is taken:
        ``AssistantExistsError`` (``raise``), or the existing one and False (``do_nothing``)."""
        ...

    def get(self, assistant_id: str) -> Assistant:
        """The assistant, with the version runs use."""
        ...

    def search(self, graph_id: str | None = None) -> builtins.list[Assistant]:
        """Every assistant (of ``graph_id`` only, if given), most recently created first."""
        ...

    def update(self, assistant_id: str, revise: Revise) -> Assistant:
        """Add the version ``revise`` makes of the assistant (numbered one past its newest), and make
        it the one runs use; whatever ``revise`` raises is raised, nothing written."""
        ...

    def set_latest(self, assistant_id: str, version: int, *, by: str, at: float) -> Assistant:
        """Make ``version`` the one runs use (``UnknownVersionError`` if it has none such)."""
        ...

    def delete(self, assistant_id: str, *, by: str, at: float) -> None:
        """Remove the assistant and its versions; its change log stays, ending with the delete."""
        ...

    def versions(self, assistant_id: str) -> builtins.list[AssistantVersion]:
        """Every version of the assistant, newest first."""
        ...

    def changes(self, assistant_id: str) -> builtins.list[AssistantChange]:
        """The assistant's change log, oldest first (also once it is deleted; empty if it never was)."""
        ...

    def close(self) -> None:
        """Release connections; closing twice is harmless."""
        ...
