"""The errors a session raises on purpose, each naming the thread or approval at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class SessionError(GraphARCError):
    """Something about a durable session that cannot be done as asked."""


class SessionStoreError(SessionError):
    """A session directory or database that cannot be used (a file, unreadable, corrupt)."""


class UnknownSessionError(SessionError):
    """No session has the thread id given."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"no session has thread id {thread_id!r}",
                         hint="grapharc session list shows the threads there are")


class UnknownCheckpointError(SessionError):
    """A thread has no checkpoint with the id given."""

    def __init__(self, thread_id: str, checkpoint_id: str) -> None:
        super().__init__(f"thread {thread_id!r} has no checkpoint {checkpoint_id[:200]!r}",
                         hint="a thread's history lists the checkpoints it has")


class SessionExistsError(SessionError):
    """A new session was given a thread id that is already taken."""


class UnknownGraphError(SessionError):
    """A session's graph is not registered in this process, so it cannot be driven here."""


class SessionInputError(SessionError):
    """Run input or an event payload the session store cannot keep (not a JSON object)."""


class UnstorableTextError(SessionInputError):
    """Text a store cannot keep: it holds a lone surrogate (what bytes that were not UTF-8, say in
    a command-line argument, decode to), which UTF-8 cannot encode."""

    def __init__(self, value: str, position: int) -> None:
        shown = value[max(0, position - 20):position + 20]
        super().__init__(f"{shown!r} holds {value[position]!r}, which is not text, so it cannot be stored "
                         "or looked up; nothing was written",
                         hint="give it as UTF-8 (bytes that were not UTF-8 arrive as lone surrogates)")


class ThreadNotPausedError(SessionError):
    """A resume for a thread that is not waiting on a human."""


class ThreadPausedError(SessionError):
    """A new turn for a thread that is still waiting on a human."""


class ThreadEndedError(SessionError):
    """A change asked of a thread in a status that does not take it (ended, or not yet settled)."""


class SessionBusyError(SessionError):
    """Another runner holds a live lease on the thread."""


class CheckpointerCapabilityError(SessionError):
    """The checkpointer lacks one of LangGraph's extended capabilities (``prune``...) a request needs."""


class PruneRefusedError(SessionError):
    """Threads the checkpointer cannot prune as asked (``keep_latest`` of a thread that uses a
    ``DeltaChannel``, whose value is rebuilt from older checkpoints)."""


class NothingToRecoverError(SessionError):
    """A recovery asked of a thread whose runner did not die holding it."""


class LeaseLostError(SessionError):
    """This runner's lease expired and another runner took the thread over."""


class NoProgressError(SessionError):
    """A continuation left the thread exactly where it was; stopped rather than loop."""


class ApprovalError(SessionError):
    """A decision that does not apply to the approval it names."""


class UnknownApprovalError(ApprovalError):
    """No approval has the id given."""


class ApprovalMismatchError(ApprovalError):
    """The approval belongs to another thread, so it cannot release this one's hold."""


class AlreadyDecidedError(ApprovalError):
    """The approval has its decision already; a second submit changes nothing."""


class StaleApprovalError(ApprovalError):
    """The approval no longer matches what the thread is held on; a new one was asked for."""


class ApprovalExpiredError(ApprovalError):
    """The approval lapsed before anyone decided it; the thread ends as expired."""


class DeciderNotAllowedError(ApprovalError):
    """The person deciding is not among those the approval names."""


class DurationError(SessionError, ValueError):
    """A retention duration that cannot be read."""
