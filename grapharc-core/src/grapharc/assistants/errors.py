"""The errors an assistant store raises on purpose, each naming the assistant at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class AssistantError(GraphARCError):
    """Something about a created assistant that cannot be done as asked."""


class AssistantStoreError(AssistantError):
    """An assistant store that cannot be opened, read or written."""


class UnknownAssistantError(AssistantError):
    """No assistant has the id given."""

    def __init__(self, assistant_id: str) -> None:
        super().__init__(f"no assistant {assistant_id!r}: neither a registered graph nor an assistant "
                         "created here", hint="POST /assistants/search lists the assistants there are")


class AssistantExistsError(AssistantError):
    """An assistant was created with an id another already has (``if_exists`` ``raise``)."""

    def __init__(self, assistant_id: str) -> None:
        super().__init__(f"assistant {assistant_id} already exists",
                         hint="send if_exists 'do_nothing' to get it back, or leave assistant_id out")


class UnknownVersionError(AssistantError):
    """The assistant has no version with the number given."""

    def __init__(self, assistant_id: str, version: int) -> None:
        super().__init__(f"assistant {assistant_id} has no version {version}",
                         hint="POST /assistants/{id}/versions lists its versions")
