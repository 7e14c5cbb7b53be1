"""The ``cron`` commands (list, add, delete): the schedules ``grapharc serve`` fires, in the session store.

The store is found as the ``session`` commands find theirs (``--sessions``, ``$GRAPHARC_SESSIONS``,
``sessions`` in grapharc.toml, ``.grapharc/sessions``). ``add`` checks the cron expression, time
zone, end time and thread; the run itself (its assistant, input and budget) is checked by the
server when each slot fires, which logs a refusal (made over HTTP, a schedule's run is checked
as it is made). ``delete`` of a schedule that is not there exits 1.
"""

from __future__ import annotations

import json
import time
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from grapharc.cli.options import Sessions
from grapharc.cli.output import ExitCode, JsonOption, emit, fail
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.session.location import session_location
from grapharc.sqlite.files import holds_server_records, holds_sessions


class NotAJsonObjectError(ConfigurationError):
    """An option that takes a JSON object was given something else."""


def add_cron_commands(app: typer.Typer) -> None:
    """Add the ``cron`` group (list, add, delete) to ``app``."""
    group = typer.Typer(name="cron", no_args_is_help=True,
                        help="Cron schedules of runs, fired by grapharc serve: list, add, delete.")
    for name, command in (("list", list_command), ("add", add_command), ("delete", delete_command)):
        group.command(name)(command)
    app.add_typer(group, name="cron")


def list_command(sessions: Sessions = None, as_json: JsonOption = False,
                 assistant: Annotated[str | None, typer.Option(help="Only this assistant's.")] = None,
                 thread: Annotated[str | None, typer.Option(help="Only this thread's.")] = None) -> None:
    """List the schedules, newest first, with the next slot each fires at."""
    from grapharc.crons.manage import open_crons
    from grapharc.crons.records import CronFilter

    try:
        where = session_location(sessions)
        found = []
        if holds_server_records(where):
            with closing(open_crons(where)) as crons:
                found = crons.search(CronFilter(assistant_id=assistant, thread_id=thread))
    except GraphARCError as exc:
        fail(exc, as_json)
    emit({"crons": [cron.to_dict() for cron in found]}, as_json, render_list)


def add_command(
    assistant: Annotated[str, typer.Option(help="The assistant (a registered graph's name) each run runs.")],
    schedule: Annotated[str, typer.Option(help="Cron expression, as in '*/15 * * * *'.")],
    input_json: Annotated[str, typer.Option("--input", help="The runs' input, a JSON object.")] = "{}",
    thread: Annotated[str | None, typer.Option(
        help="Run on this thread (default: each run on a new thread).")] = None,
    timezone: Annotated[str | None, typer.Option(help="IANA time zone (default: UTC).")] = None,
    end_time: Annotated[str | None, typer.Option("--end-time", help="ISO 8601: no slot after it.")] = None,
    metadata_json: Annotated[str, typer.Option("--metadata", help="The runs' metadata (JSON).")] = "{}",
    on_run_completed: Annotated[Literal["delete", "keep"], typer.Option(
        "--on-run-completed", help="What becomes of a new thread once its run ends.")] = "delete",
    sessions: Sessions = None, as_json: JsonOption = False,
) -> None:
    """Add a schedule; grapharc serve on the same sessions fires it from its next slot."""
    from grapharc.crons.manage import new_cron, open_crons
    from grapharc.crons.schedule import end_time_of

    try:
        where = session_location(sessions)
        given, metadata = _object("--input", input_json), _object("--metadata", metadata_json)
        if thread is not None:
            _existing_thread(where, thread)
        payload = {"assistant_id": assistant, "input": given, **({"metadata": metadata} if metadata else {})}
        cron = new_cron(assistant_id=assistant, schedule=schedule, payload=payload, now=time.time(),
                        thread_id=thread, timezone=timezone, end_time=end_time_of(end_time),
                        metadata=metadata, on_run_completed=on_run_completed if thread is None else None)
        with closing(open_crons(where)) as crons:
            made = crons.add(cron)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(made.to_dict(), as_json, render_added)


def delete_command(cron_id: Annotated[str, typer.Argument(help="The schedule's id.")],
                   sessions: Sessions = None, as_json: JsonOption = False) -> None:
    """Delete a schedule (the runs it started stay); exit 1 when there is none with that id."""
    from grapharc.crons.errors import UnknownCronError
    from grapharc.crons.manage import open_crons

    try:
        where = session_location(sessions)
        if not holds_server_records(where):
            raise UnknownCronError(cron_id)
        with closing(open_crons(where)) as crons:
            crons.delete(cron_id)
    except UnknownCronError as exc:
        fail(exc, as_json, ExitCode.NEGATIVE)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit({"deleted": cron_id}, as_json, lambda doc: f"deleted cron {doc['deleted']}")


def _object(option: str, text: str) -> dict[str, Any]:
    """The JSON object ``text`` given to ``option``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotAJsonObjectError(f"{option} is not JSON: {exc}",
                                  hint=f"e.g. {option} '{{\"key\": 1}}'") from None
    if not isinstance(value, dict):
        raise NotAJsonObjectError(f"{option} must be a JSON object, not {type(value).__name__}",
                                  hint=f"e.g. {option} '{{\"key\": 1}}'")
    return value


def _existing_thread(where: str | Path, thread: str) -> None:
    """Refuse a thread the session store does not have (``UnknownSessionError``)."""
    from grapharc.session.errors import UnknownSessionError
    from grapharc.session.manager import SessionManager

    if not holds_sessions(where):
        raise UnknownSessionError(thread)
    with closing(SessionManager(where)) as manager:
        manager.get(thread)


def render_list(doc: dict[str, Any]) -> str:
    if not doc["crons"]:
        return "no cron schedules"
    return "\n".join(f"{c['cron_id']}  {c['schedule']:<15} {c['timezone'] or 'UTC':<16} "
                     f"{c['assistant_id']} on {c['thread_id'] or 'a new thread'}, next "
                     f"{c['next_run_date'] if c['enabled'] else '(disabled)'}" for c in doc["crons"])


def render_added(doc: dict[str, Any]) -> str:
    return f"added cron {doc['cron_id']}: {doc['schedule']}, first run at {doc['next_run_date']}"
