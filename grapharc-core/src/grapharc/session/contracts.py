"""What the session layer asks of its two stores, so a backend other than core's can serve it.

A ``SessionStore`` keeps status, leases, approvals, the event queue and the audit trail;
a ``CheckpointerProvider`` hands out LangGraph's checkpoint savers for graph state. Both
are opened by URI through the stores hook (kinds ``sessions`` and ``checkpoints``), so a
distribution that registers a scheme for both (PostgreSQL with LangGraph's
``PostgresSaver`` and ``AsyncPostgresSaver``) runs every session unchanged. The
conformance kits in ``grapharc.testing`` (``session_store_kit``, ``checkpointer_kit``)
pin what these docstrings promise.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
from collections.abc import Collection, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from grapharc.session.approvals import Hold
    from grapharc.session.audit import NodeRun
    from grapharc.session.lease import Lease
    from grapharc.session.records import Answer, Approval, AuditEntry, DecisionMark, Event, Session


@runtime_checkable
class SessionStore(Protocol):
    """Sessions, leases, approvals, events and the audit trail, shared by every runner.

    Every change is atomic and safe to call from several threads and processes at once;
    a change fenced by a lease takes effect only while that lease is the thread's
    current one. Unknown thread ids raise ``UnknownSessionError``, unknown approval ids
    ``UnknownApprovalError``; nothing is written when a call raises.
    """

    def create(self, thread_id: str, graph: str, now: float, *, owner: str | None = None,
               tenant: str | None = None, metadata: Mapping[str, Any] | None = None) -> Session:
        """A new session in status ``created`` (``SessionExistsError`` if the id is taken) whose
        ``owner`` and ``tenant`` read back as given (never changed after), as does its own
        ``metadata`` (a JSON object; empty if not given) until ``update_metadata``."""
        ...

    def update_metadata(self, thread_id: str, metadata: Mapping[str, Any], now: float, *, by: str) -> Session:
        """Merge ``metadata`` into the thread's own (each key replaces the one of its name, as
        LangGraph's thread PATCH does) and mark the thread updated at ``now``, recorded on the trail
        (a ``metadata`` entry: ``by`` whom, which keys, never their values); the session after."""
        ...

    def get(self, thread_id: str) -> Session:
        """The session, with its open approvals as ``holds`` and its last recorded node."""
        ...

    def list(self, status: str | None = None) -> list[Session]:
        """Every session (or those in ``status``), most recently changed first."""
        ...

    def claim_start(self, thread_id: str, *, runner: str, ttl: float, now: float,
                    input: Mapping[str, Any], inbox: str | None) -> Lease:
        """Lease a created or completed thread for a new turn; undelivered events join ``inbox``.

        Refuses a thread under a live lease or left running (``SessionBusyError``), a paused
        one (``ThreadPausedError``) and an ended one (``SessionError``). Of two runners
        claiming at once exactly one wins.
        """
        ...

    def claim_continue(self, thread_id: str, *, runner: str, ttl: float, now: float) -> Lease:
        """Lease a thread paused on no open approval (a breakpoint stopped it) to carry it on;
        ``ThreadPausedError`` for any other."""
        ...

    def claim_recovery(self, thread_id: str, *, runner: str, ttl: float, now: float) -> Lease:
        """Lease a thread whose runner's lease expired, or whose turn failed, carrying its turn on.

        A live lease raises ``SessionBusyError``; any other status ``NothingToRecoverError``.
        """
        ...

    def claim_edit(self, thread_id: str, *, runner: str, ttl: float, now: float,
                   plain: Collection[str] = ()) -> Lease:
        """Lease a created or completed thread for a state edit from outside a turn, or a paused one
        whose open approvals are all in ``plain`` (plain interrupts; none: a breakpoint stopped it).

        Refuses a busy thread as ``claim_start`` does, one waiting on a decision
        (``ThreadPausedError`` naming those approvals) and an ended one (``ThreadEndedError``).
        """
        ...

    def finish_edit(self, lease: Lease, now: float, *, detail: Mapping[str, Any] | None,
                    audited_step: int | None = None, status: str | None = None,
                    carried: Mapping[str, str] | None = None) -> None:
        """Release an edit's lease, the thread back in the status it had (or ``status``): with
        ``detail``, an ``updated`` entry records it; None leaves the row as before the claim
        (nothing written). ``carried`` (an edit of a paused thread): the open approvals whose hold
        key it maps move to the new key, the others are superseded (the entry lists them as
        ``superseded``). ``audited_step`` lowers the scan's watermark to it. Fenced:
        ``LeaseLostError``."""
        ...

    def claim_fork(self, thread_id: str, *, runner: str, ttl: float, now: float, checkpoint_id: str,
                   step: int, input: Mapping[str, Any] | None, by: str) -> Lease:
        """Lease a thread for a turn from its checkpoint ``checkpoint_id`` (of superstep ``step``,
        where the scan's watermark goes back to), with ``input`` (None: carry on from it).

        A created, completed, paused (its open approvals superseded) or failed thread; a busy one
        is refused as ``claim_start`` refuses it, an ended one (``ThreadEndedError``). The
        ``claimed`` entry says ``turn: fork``, the checkpoint and ``by``.
        """
        ...

    def copy(self, source_id: str, target_id: str, now: float, *, by: str, owner: str | None = None,
             tenant: str | None = None, plain: Collection[str] = ()) -> None:
        """Create ``target_id`` as a copy of the created or completed thread ``source_id``'s session
        (graph, status, outcome, scan watermark), owned by ``owner``; its trail begins with a
        ``copied`` entry. ``SessionExistsError`` if the id is taken; refused as ``claim_edit``
        refuses a thread that is not idle, except that a source paused on the plain interrupts
        ``plain`` alone is copied with those approvals asked again on the copy (new ids)."""
        ...

    def renew(self, lease: Lease, now: float) -> bool:
        """Extend ``lease`` by its ttl from ``now``; False if it is no longer the thread's lease."""
        ...

    def holds(self, lease: Lease) -> bool:
        """True while ``lease`` is still its thread's current lease."""
        ...

    def finish(self, lease: Lease, status: str, now: float, *, requests: Iterable[Approval] = (),
               outcome: str | None = None, error: str | None = None,
               cancel: Mapping[str, Any] | None = None, audited_step: int | None = None,
               reopened: Iterable[str] = ()) -> Session:
        """End a turn in ``status``, release the lease and open ``requests``; the session as it is
        left (what ``get`` reads next: a run's end reads it no more).

        ``LeaseLostError`` if the lease is gone. A turn that does not end paused
        supersedes the thread's open approvals; a failed one keeps its turn for recovery.
        ``cancel``: a turn cancelled on request, recorded as a ``cancelled`` entry carrying that
        detail and the status; ``audited_step``: where the next scan for completed nodes starts
        (set back after a rollback discarded the checkpoints past it); ``reopened``: the thread's
        decided approvals a rollback undid, open again and undecided (named on the entry).
        """
        ...

    def approvals(self, thread_id: str) -> builtins.list[Approval]:
        """Every approval the thread has asked for, oldest first."""
        ...

    def approval(self, approval_id: str) -> Approval:
        """One approval by id."""
        ...

    def decided(self, limit: int, *, before: DecisionMark | None = None,
                after: DecisionMark | None = None) -> builtins.list[Approval]:
        """Up to ``limit`` decided approvals (approved or declined) of every thread, the newest
        decision first, ordered by (``decided_at``, ``approval_id``), both descending. ``before``: only
        those ordered after that mark (the next page); ``after``: the ``limit`` nearest before it (the
        previous page), still newest first. A decision a rollback undid is open again, so not here."""
        ...

    def decide(self, thread_id: str, approval_id: str, decision: str, *, decider: str, now: float,
               current: Hold | None, runner: str, ttl: float, answer: Answer | None = None) -> Lease | None:
        """Record a decision on a paused thread; a lease for ``runner`` when it was the last open hold.
        ``answer``: the value a plain interrupt is answered with, kept on the ``decided`` entry.

        Refused without a write: another thread's approval (``ApprovalMismatchError``), a
        decided one (``AlreadyDecidedError``, or ``ThreadNotPausedError`` once the thread
        moved on), a decider not named (``DeciderNotAllowedError``). An expired approval
        ends the thread ``expired`` (``ApprovalExpiredError``); one that no longer matches
        ``current`` (the hold the checkpoint shows) is superseded, and a fresh one opened
        for ``current`` (``StaleApprovalError``). A rejected gate ends the thread ``rejected``.
        """
        ...

    def post_event(self, thread_id: str, kind: str, payload: Mapping[str, Any], now: float) -> Event:
        """Queue an event for the thread's next start turn."""
        ...

    def events(self, thread_id: str) -> builtins.list[Event]:
        """Every event posted to the thread, oldest first, delivered or not."""
        ...

    def audited_step(self, thread_id: str) -> int:
        """The checkpoint step the next scan for completed nodes starts from (-1 before the first)."""
        ...

    def record_nodes(self, lease: Lease, runs: Iterable[NodeRun], audited_step: int, now: float) -> int:
        """Append completed nodes, each (step, node, task) once, and move the scan's watermark;
        return how many were not recorded before (a rescanned checkpoint repeats some).

        Fenced: ``LeaseLostError`` if ``lease`` is no longer the thread's.
        """
        ...

    def record_directive(self, lease: Lease, detail: Mapping[str, Any], now: float) -> None:
        """Append the goto and update a client asked the turn to apply (kind ``directed``).

        Fenced: ``LeaseLostError`` if ``lease`` is no longer the thread's.
        """
        ...

    def record_run(self, lease: Lease, run: Mapping[str, Any], now: float) -> None:
        """Append one run a turn made (kind ``run``; ``run["run_id"]`` recorded once).

        Fenced: ``LeaseLostError`` if ``lease`` is no longer the thread's.
        """
        ...

    def audit(self, thread_id: str, after: int = 0) -> builtins.list[AuditEntry]:
        """The thread's audit trail, oldest first; entries are only ever appended. ``after``: only
        the entries whose ``seq`` is above it (what a reader that has the rest has not seen)."""
        ...

    def last_seq(self, thread_id: str, after: int = 0) -> int:
        """The ``seq`` of the thread's newest audit entry, or ``after`` when none is past it (a
        reader that needs only where the trail ends reads no entry, however long the trail).
        ``UnknownSessionError`` if there is no such thread."""
        ...

    def record_pruned(self, thread_id: str, detail: Mapping[str, Any], now: float) -> None:
        """Append a ``pruned`` entry (``detail``: who asked, what was dropped): all but the thread's
        latest checkpoints are gone. ``UnknownSessionError`` if there is no such thread."""
        ...

    def prune(self, before: float) -> builtins.list[str]:
        """Remove finished sessions last changed before ``before`` with all their records; their ids.

        Paused, running and created sessions stay however old. Giving freed space back to
        the medium (a file's ``VACUUM``) is the store's business.
        """
        ...

    def delete(self, thread_id: str, now: float) -> None:
        """Remove one session with all its records, whatever its status, unless a runner's lease
        on it is live (``SessionBusyError``); ``UnknownSessionError`` if there is none."""
        ...

    def footprint(self) -> dict[str, int]:
        """Bytes the store occupies, by where (a file, a table), so shared places count once."""
        ...

    def close(self) -> None:
        """Release connections; closing twice is harmless."""
        ...


@runtime_checkable
class ChangeNotifier(Protocol):
    """What a session store may also offer: being told when another process writes a thread's
    audit trail, rather than finding out at the next poll (PostgreSQL's LISTEN/NOTIFY)."""

    async def wait_for_change(self, thread_id: str, timeout: float) -> bool:
        """True once the thread's audit trail (or trace) is written to, by any process, within
        ``timeout`` seconds; False when the time passes first. A write made before the call may
        not wake it, so a caller re-reads after every return."""
        ...

    async def wait_for_any_change(self, timeout: float) -> bool:
        """As ``wait_for_change``, for a write to any thread's audit trail (or trace): what a
        reader of every thread (the inbox's pending approvals) waits on."""
        ...


@runtime_checkable
class SignInRecords(Protocol):
    """What a session store may also keep for a server's sign-in pages, where every worker over the
    store sees it: page sessions signed out before they expire, and recent failed sign-ins."""

    def revoke_sign_in(self, nonce: str, until: float, now: float) -> None:
        """Record the page session ``nonce`` as signed out until ``until`` (when it would have expired
        anyway); revocations past their time may be forgotten from ``now`` on."""
        ...

    def sign_in_revoked(self, nonce: str, now: float) -> bool:
        """True if the page session ``nonce`` was signed out (and would not have expired by ``now``)."""
        ...

    def sign_in_failed(self, subjects: Iterable[str], now: float, forget_before: float) -> None:
        """Record a failed sign-in at ``now`` against each of ``subjects`` (a user, an address);
        failures before ``forget_before`` may be forgotten."""
        ...

    def sign_in_failures(self, subjects: Iterable[str], since: float) -> dict[str, builtins.list[float]]:
        """The times of each subject's failed sign-ins at or after ``since``, oldest first (a subject
        with none is left out)."""
        ...


def graph_of(store: SessionStore, thread_id: str) -> str:
    """The graph thread ``thread_id`` runs (``UnknownSessionError`` if there is none): the store's
    own ``graph_of`` where it has one (a read of that one column; the SQL stores have one), else
    ``get``'s. Not part of the protocol, so a store without it still serves."""
    read = getattr(store, "graph_of", None)
    return str(read(thread_id)) if read is not None else store.get(thread_id).graph


@runtime_checkable
class CheckpointerProvider(Protocol):
    """LangGraph checkpoint savers over one place: a sync one for the process, async ones per loop.

    ``saver()`` and every ``async_saver()`` see the same checkpoints, so a thread paused
    by a CLI process resumes in a server's event loop and back.
    """

    def saver(self) -> BaseCheckpointSaver[Any]:
        """The sync saver, opened on first call and shared by every thread of the process."""
        ...

    def async_saver(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        """A new async saver bound to the running event loop, closed when the context exits."""
        ...

    def compact(self) -> None:
        """Give the space of deleted checkpoints back to the medium (a no-op where it does so itself)."""
        ...

    def footprint(self) -> dict[str, int]:
        """Bytes the checkpoints occupy, by where (a file, a table), so shared places count once."""
        ...

    def close(self) -> None:
        """Close the sync saver; async savers close with their contexts. Closing twice is harmless."""
        ...
