"""The ``session`` commands (status, list, prune, approve, reject, recover) and the ``demo approval`` story.

Sessions live in a store: the ``sessions`` setting (``--sessions`` or its older name ``--dir``,
else ``$GRAPHARC_SESSIONS``, else ``sessions`` in grapharc.toml, else ``.grapharc/sessions``), a
folder or a store URI such as ``postgresql://user@host/db``. ``status`` and ``list`` read
only the session store, so they work from any process without the graph; ``demo approval``
registers the credit graph of ``grapharc.examples.approval`` and drives its threads. Every
command takes ``--json``.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from grapharc.cli.options import LeaseSeconds, Sessions, sessions_flag
from grapharc.cli.output import ExitCode, JsonOption, emit, fail, terminal_text
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.session.location import session_location
from grapharc.sqlite.files import holds_sessions

TRAP_NOTE = ("on resume, sign_off runs again from its first line: nothing with an effect sits above its "
             "interrupt(), and the payout is a node of its own (disburse)")


class UnknownStatusError(ConfigurationError):
    """``session list --status`` names a status no session can have."""


def add_session_commands(app: typer.Typer) -> None:
    """Add the ``session`` group (status, list, prune) to ``app``."""
    group = typer.Typer(name="session", help="Durable sessions: where each thread stands, and retention.",
                        no_args_is_help=True)
    for name, command in (("status", status_command), ("list", list_command), ("prune", prune_command),
                          ("approve", approve_command), ("reject", reject_command),
                          ("recover", recover_command)):
        group.command(name)(command)
    app.add_typer(group, name="session")


def add_approval_demo(demo_app: typer.Typer) -> None:
    """Add the ``approval`` sub-group (run, resume, recover) to the ``demo`` group."""
    group = typer.Typer(name="approval", no_args_is_help=True,
                        help="Credit approval: pause for a person, exit, resume in a new process.")
    group.command("run")(demo_run_command)
    group.command("resume")(demo_resume_command)
    group.command("recover")(demo_recover_command)
    demo_app.add_typer(group, name="approval")


@contextmanager
def _opened(where: str | Path, lease: float = 30.0) -> Iterator[Any]:
    """A session manager on ``where``, closed (its connections with it) when the command is done."""
    from grapharc.session.manager import SessionManager

    manager = SessionManager(where, lease_seconds=lease)
    try:
        yield manager
    finally:
        manager.close()


def _read(where: str | Path, read: Callable[[Any], Any], empty: Any) -> Any:
    """What ``read`` returns from the session store at ``where``, or ``empty`` where there is none."""
    if not holds_sessions(where):
        return empty
    with _opened(where) as manager:
        return read(manager)


# -- session group -----------------------------------------------------------------------


def status_command(thread: Annotated[str, typer.Argument(help="The thread id.")],
                   sessions: Sessions = None, as_json: JsonOption = False) -> None:
    """Show where one thread stands: status, lease, last node, what it waits on."""
    from grapharc.session.errors import UnknownSessionError

    try:
        where = session_location(sessions)
        if not holds_sessions(where):
            raise UnknownSessionError(thread)
        with _opened(where) as manager:
            session = manager.get(thread)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(session.to_dict(time.time()), as_json, render_status)


def list_command(sessions: Sessions = None, as_json: JsonOption = False,
                 status: Annotated[str | None, typer.Option(
                     "--status", help="Only threads in this status.")] = None) -> None:
    """List every thread and where it stands, most recently changed first."""
    from grapharc.session.records import STATUSES

    try:
        where = session_location(sessions)
        if status is not None and status not in STATUSES:
            raise UnknownStatusError(f"unknown status {status!r}; statuses: {', '.join(STATUSES)}")
        found = _read(where, lambda manager: manager.list(status), [])
    except GraphARCError as exc:
        fail(exc, as_json)
    now = time.time()
    emit({"sessions": [s.to_dict(now) for s in found]}, as_json, render_list)


def prune_command(
    older_than: Annotated[str, typer.Option(
        "--older-than", help="Remove finished threads unchanged for this long (30d, 12h, 1d12h).")],
    sessions: Sessions = None, as_json: JsonOption = False,
) -> None:
    """Remove finished threads (with checkpoints and holds); paused or running ones always stay."""
    from grapharc.session.retention import PruneReport, parse_duration

    try:
        where = session_location(sessions)
        seconds = parse_duration(older_than)
        report = _read(where, lambda manager: manager.prune(seconds), PruneReport((), 0, 0))
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(report.to_dict(), as_json, render_prune)


def render_prune(doc: dict[str, Any]) -> str:
    if not doc["count"]:
        return "nothing to prune: no finished thread is that old; nothing was removed"
    return (f"removed {doc['count']} finished thread(s) with {doc['checkpoints']} checkpoint(s); "
            f"freed {doc['bytes_freed']} bytes ({doc['bytes_on_disk']} on disk now)")


UNREADABLE = "unreadable"
"""How a time a damaged row holds (one no calendar holds) is shown, instead of None."""


def render_status(doc: dict[str, Any]) -> str:
    lines = [f"thread   {doc['thread_id']}", f"graph    {doc['graph']}", f"status   {doc['stand']}",
             f"updated  {doc['updated_at'] or UNREADABLE}"]
    if doc["damaged"]:
        lines.append(f"damaged  {doc['damaged']} (the stored record; shown, not dropped)")
    if doc["runner"]:
        lines.append(f"runner   {doc['runner']} (lease until {doc['lease_expires_at'] or UNREADABLE})")
    if doc["last_node"]:
        lines.append(f"last     {doc['last_node']} (step {doc['last_step']})")
    if doc["outcome"]:
        lines.append(f"outcome  {doc['outcome']}")
    if doc["error"]:
        lines.append(f"error    {doc['error']}")
    for hold in doc["holds"]:
        who = ", ".join(hold["deciders"]) or "anyone"
        lines.append(f"waiting  {hold['approval_id']} {hold['node']}: {hold['question']} "
                     f"(decided by {who}; expires {hold['expires_at'] or 'never'})")
    return "\n".join(lines)


def render_list(doc: dict[str, Any]) -> str:
    rows = [("THREAD", "GRAPH", "STATUS", "UPDATED", "LAST NODE", "WAITING ON")]
    for s in doc["sessions"]:
        status = s["status"] + ("*" if s["reclaimable"] else "") + ("!" if s["damaged"] else "")
        waiting = ", ".join(f"{h['node']} ({h['approval_id']})" for h in s["holds"]) or "-"
        rows.append((s["thread_id"], s["graph"], status, s["updated_at"] or UNREADABLE,
                     s["last_node"] or "-", waiting))
    if len(rows) == 1:
        return "no sessions"
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    text = "\n".join("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
                     for row in rows)
    if any(s["reclaimable"] for s in doc["sessions"]):
        text += "\n* running, but its runner's lease expired: reclaimable"
    for s in doc["sessions"]:
        if s["damaged"]:
            text += f"\n! {s['thread_id']}: damaged record, {s['damaged']} (see: grapharc session status)"
    return text


ApprovalOption = Annotated[str | None, typer.Option(
    "--approval", help="The approval answered (default: the thread's only open one).")]
DeciderOption = Annotated[str | None, typer.Option(
    "--decider", help="Who decides (default: your user name).")]


def approve_command(thread: Annotated[str, typer.Argument(help="The paused thread.")],
                    approval: ApprovalOption = None, decider: DeciderOption = None,
                    sessions: Sessions = None, as_json: JsonOption = False) -> None:
    """Approve what a paused thread waits on, and carry the thread on in this process."""
    _decide(thread, "approved", approval, decider, sessions, as_json)


def reject_command(thread: Annotated[str, typer.Argument(help="The paused thread.")],
                   approval: ApprovalOption = None, decider: DeciderOption = None,
                   sessions: Sessions = None, as_json: JsonOption = False) -> None:
    """Reject what a paused thread waits on (an agent is told no and carries on)."""
    _decide(thread, "rejected", approval, decider, sessions, as_json)


def _decide(thread: str, decision: str, approval: str | None, decider: str | None, sessions: str | None,
            as_json: bool) -> None:
    """Answer a thread's approval and carry the thread on."""
    import getpass

    def move(manager: Any, on_update: Any) -> Any:
        approval_id = approval or _only_hold(manager, thread)
        return manager.resume(thread, approval_id, decision, decider=decider or getpass.getuser(),
                              on_update=on_update)

    _carry_on(thread, sessions, as_json, move)


def recover_command(
    thread: Annotated[str, typer.Argument(help="A thread whose runner died or whose turn failed.")],
    sessions: Sessions = None, lease: LeaseSeconds = 30.0, as_json: JsonOption = False,
) -> None:
    """Carry on a thread whose runner died (once its lease expired) from its last checkpoint."""

    def move(manager: Any, on_update: Any) -> Any:
        return manager.recover(thread, on_update=on_update)

    _carry_on(thread, sessions, as_json, move, lease)


def _carry_on(thread: str, sessions: str | None, as_json: bool, move: Callable[[Any, Any], Any],
              lease: float = 30.0) -> None:
    """Open the thread's graph in this process and ``move`` it on: an agent thread's agent is
    rebuilt from the settings stored with it; the demos' graphs are registered by name."""
    from grapharc.cli.agent_command import Progress, finish, session_document
    from grapharc.governed.known_graphs import register_thread_graph
    from grapharc.session.errors import UnknownSessionError

    story = _Story(as_json)
    try:
        where = session_location(sessions)
        if not holds_sessions(where):
            raise UnknownSessionError(thread)
        with _opened(where, lease) as manager:
            trace = register_thread_graph(manager, thread)
            if trace is not None:
                session = move(manager, Progress(as_json).remember(manager.values(thread)))
                document = session_document(manager, session, trace, where)
            else:
                session, document = move(manager, story), None
    except GraphARCError as exc:
        fail(exc, as_json)
    if document is not None:
        finish(document, as_json)
    else:
        _finish_story(session, story, where if sessions is not None else None)


# -- demo approval group -----------------------------------------------------------------


class _Story:
    """Prints each node's notes as the thread moves (or keeps them for --json)."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.lines: list[str] = []

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        for note in update.get("notes", []):
            line = f"{'[' + node + ']':<20}{note}"
            self.lines.append(line)
            if not self.as_json:
                typer.echo(terminal_text(line))


def _demo_manager(where: str | Path, lease: float, thread: str | None = None) -> Any:
    """The credit graph's manager on the store ``where``; to carry on ``thread``, that store must exist
    already (a resume or recover of a thread that cannot be in a folder creates no session store there)."""
    from grapharc.examples.approval import register_credit_graph
    from grapharc.session.errors import UnknownSessionError
    from grapharc.session.manager import SessionManager

    if thread is not None and not holds_sessions(where):
        raise UnknownSessionError(thread)
    manager = SessionManager(where, lease_seconds=lease)
    register_credit_graph(manager)
    return manager


def _finish_story(session: Any, story: _Story, named: str | Path | None) -> None:
    """Print where the thread ended up; a paused one with the command that answers it. ``named``:
    the session store a ``--sessions`` flag named, which that command names too (credentials
    masked); None: the settings' own store, which the command finds again without a flag."""
    from grapharc.stores.masking import masked

    document = {**session.to_dict(time.time()), "lines": story.lines}
    if session.status == "paused":
        flag = "" if named is None else f" {sessions_flag(masked(str(named)))}"
        document["answer_with"] = (f"grapharc demo approval resume {shlex.quote(session.thread_id)} "
                                   f"approved|rejected{flag}")
        document["note"] = TRAP_NOTE
    negative = session.status in ("rejected", "expired", "failed") or (
        session.status == "completed" and session.outcome == "declined")
    code = ExitCode.NEGATIVE if negative else ExitCode.OK
    emit(document, story.as_json, render_ending, code)


def render_ending(doc: dict[str, Any]) -> str:
    thread = doc["thread_id"]
    if doc["status"] == "paused":
        lines = [f"PAUSED  thread={thread}"]
        for hold in doc["holds"]:
            lines.append(f"        waiting: {hold['question']} (approval {hold['approval_id']}, "
                         f"for {', '.join(hold['deciders']) or 'anyone'})")
        lines.append(f"        nothing is running now; answer with: {doc['answer_with']}")
        lines.append(f"        {doc['note']}")
        return "\n".join(lines)
    if doc["status"] == "completed":
        return f"DONE    thread={thread} {doc['outcome']}"
    return f"{doc['status'].upper():<8}thread={thread}" + (f" {doc['error']}" if doc["error"] else "")


def demo_run_command(
    application: Annotated[str, typer.Option("--application", help="Application id, e.g. LN-7310.")],
    thread: Annotated[str | None, typer.Option(
        "--thread", help="Thread id to use (default: a new one).")] = None,
    sessions: Sessions = None, lease: LeaseSeconds = 30.0, as_json: JsonOption = False,
) -> None:
    """Run an application until it is paid out, declined, or paused for the credit desk."""
    from grapharc.examples.approval import GRAPH_NAME, lookup

    story = _Story(as_json)
    try:
        lookup(application)
        where = session_location(sessions)
        session = _demo_manager(where, lease).start(GRAPH_NAME, {"application_id": application},
                                                    thread_id=thread, on_update=story)
    except GraphARCError as exc:
        fail(exc, as_json)
    _finish_story(session, story, where if sessions is not None else None)


def demo_resume_command(
    thread: Annotated[str, typer.Argument(help="The paused thread.")],
    decision: Annotated[str, typer.Argument(help="approved or rejected.")],
    approval: Annotated[str | None, typer.Option(
        "--approval", help="The approval answered (default: the thread's only open one).")] = None,
    decider: Annotated[str, typer.Option("--decider", help="Who decides.")] = "credit-desk",
    sessions: Sessions = None, lease: LeaseSeconds = 30.0, as_json: JsonOption = False,
) -> None:
    """Answer a paused thread's approval and finish it, in this new process."""
    story = _Story(as_json)
    try:
        where = session_location(sessions)
        manager = _demo_manager(where, lease, thread)
        approval_id = approval or _only_hold(manager, thread)
        session = manager.resume(thread, approval_id, decision, decider=decider, on_update=story)
    except GraphARCError as exc:
        fail(exc, as_json)
    _finish_story(session, story, where if sessions is not None else None)


def demo_recover_command(
    thread: Annotated[str, typer.Argument(help="A thread whose runner died or whose turn failed.")],
    sessions: Sessions = None, lease: LeaseSeconds = 30.0, as_json: JsonOption = False,
) -> None:
    """Carry on a thread whose runner died (once its lease expired) from its last checkpoint."""
    story = _Story(as_json)
    try:
        where = session_location(sessions)
        session = _demo_manager(where, lease, thread).recover(thread, on_update=story)
    except GraphARCError as exc:
        fail(exc, as_json)
    _finish_story(session, story, where if sessions is not None else None)


def _only_hold(manager: Any, thread: str) -> str:
    """The id of the thread's one open approval, or a clear refusal."""
    from grapharc.session.errors import ApprovalError, ThreadNotPausedError

    session = manager.get(thread)
    if session.status != "paused":
        raise ThreadNotPausedError(f"thread {thread} is not paused (it is {session.status})")
    if len(session.holds) != 1:
        ids = ", ".join(h.approval_id for h in session.holds)
        raise ApprovalError(f"thread {thread} waits on {len(session.holds)} approvals ({ids})",
                            hint="name one with --approval")
    return session.holds[0].approval_id
