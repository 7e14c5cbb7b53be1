"""The assistant store of a sessions scheme whose plugin registers none: only the graphs' own
assistants exist, and creating one is refused naming why (the server still starts, as it did
before assistants could be created)."""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from typing import NoReturn

from grapharc.assistants.contracts import Revise
from grapharc.assistants.errors import AssistantStoreError, UnknownAssistantError
from grapharc.assistants.records import Assistant, AssistantChange, AssistantVersion


class AssistantsUnavailableError(AssistantStoreError):
    """The sessions' scheme has no assistant store, so no assistant can be created or changed."""


class NoAssistants:
    """An ``AssistantStore`` that holds nothing and refuses every write (scheme ``scheme``)."""

    def __init__(self, scheme: str) -> None:
        self.scheme = scheme

    def create(self, first: AssistantVersion, *, if_exists: str = "raise") -> tuple[Assistant, bool]:
        self._refuse()

    def get(self, assistant_id: str) -> Assistant:
        raise UnknownAssistantError(assistant_id)

    def search(self, graph_id: str | None = None) -> builtins.list[Assistant]:
        return []

    def update(self, assistant_id: str, revise: Revise) -> Assistant:
        raise UnknownAssistantError(assistant_id)

    def set_latest(self, assistant_id: str, version: int, *, by: str, at: float) -> Assistant:
        raise UnknownAssistantError(assistant_id)

    def delete(self, assistant_id: str, *, by: str, at: float) -> None:
        raise UnknownAssistantError(assistant_id)

    def versions(self, assistant_id: str) -> builtins.list[AssistantVersion]:
        raise UnknownAssistantError(assistant_id)

    def changes(self, assistant_id: str) -> builtins.list[AssistantChange]:
        return []

    def close(self) -> None:
        """Nothing to release."""

    def _refuse(self) -> NoReturn:
        raise AssistantsUnavailableError(
            f"assistants cannot be created here: the sessions' store scheme {self.scheme!r} registers no "
            "'assistants' store",
            hint="the graphs' own assistants (id = graph name) still run; the distribution of that "
                 "scheme can register one (grapharc.assistants.contracts)")
