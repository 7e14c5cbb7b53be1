"""What every benchmark does before it prints a figure: check that each timed run did its work.

A script times its runs, checks each one's exit status, output and counts with ``expect`` (or
runs commands through ``run``), and only then prints. Its ``main`` is wrapped in
``checked_main``: a failed check ends the script with exit status 1 and a message on stderr
naming what failed, so a run that failed can never come out as a time, a ratio or a verdict. An
environment that fails the script (a PostgreSQL or server that does not answer, a file missing)
ends it the same way, with exit status 1 and that failure in one line, never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

TAIL_CHARS = 800
"""How much of a failed command's stderr a message quotes (its end, where the error is)."""


class WorkFailed(Exception):
    """A timed run did not do the work it was timed for, so its figures mean nothing."""


def expect(condition: object, failure: str) -> None:
    """Raise ``WorkFailed(failure)`` unless ``condition`` holds (an ``assert`` that -O keeps)."""
    if not condition:
        raise WorkFailed(failure)


def expect_equal(found: Any, wanted: Any, what: str) -> None:
    """Raise ``WorkFailed`` naming ``what`` unless ``found == wanted``."""
    expect(found == wanted, f"{what}: got {found!r}, expected {wanted!r}")


def expect_exit(command: Sequence[str], status: int, stderr: str, allowed: Sequence[int] = (0,)) -> None:
    """Raise ``WorkFailed`` naming ``command``, its exit status and its stderr's end unless the
    status is one of ``allowed``."""
    if status not in allowed:
        shown = " ".join(Path(part).name if index == 0 else part for index, part in enumerate(command))
        raise WorkFailed(f"{shown[:300]} exited {status} (expected {' or '.join(map(str, allowed))}): "
                         f"{stderr.strip()[-TAIL_CHARS:] or 'no stderr'}")


def run(command: Sequence[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to its end with its output captured as text; ``WorkFailed`` unless it exited 0."""
    done = subprocess.run(list(command), capture_output=True, text=True, check=False, **options)
    expect_exit(command, done.returncode, done.stderr)
    return done


ENVIRONMENT_FAILURES = (("psycopg", "OperationalError"), ("httpx", "TransportError"),
                        ("grapharc.postgres.errors", "PostgresStoreError"))
"""Besides ``OSError``, what a module raises when a server a script uses does not answer."""


def environment_failures() -> tuple[type[BaseException], ...]:
    """What the environment raises when it fails a script: an ``OSError``, and each of
    ``ENVIRONMENT_FAILURES`` whose module the script imported (else nothing can raise it)."""
    return (OSError, *(getattr(sys.modules[module], name) for module, name in ENVIRONMENT_FAILURES
                       if module in sys.modules))


def _refuse(why: str) -> NoReturn:
    """End the script with exit status 1 and ``why`` on stderr, after its output."""
    sys.stdout.flush()
    sys.stderr.write(f"{Path(sys.argv[0]).name}: no figures: {why}\n")
    sys.exit(1)


def checked_main(main: Callable[[], int | None]) -> NoReturn:
    """Run a benchmark's ``main`` and exit with its status; 1, with the failure on stderr and
    nothing more printed, when a check found a run that did not do its work or the environment
    failed the script."""
    try:
        status = main()
    except WorkFailed as failed:
        _refuse(f"a timed run did not do its work: {failed}")
    except Exception as error:
        if not isinstance(error, environment_failures()):
            raise
        _refuse(" ".join(f"the environment failed: {type(error).__name__}: {error}".split()))
    sys.exit(status or 0)
