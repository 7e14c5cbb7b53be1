"""The reaper of one command: ``python -I -m grapharc.tools.reaper STOP STATUS LIMITS CWD -- ARGV...``.

Started by ``run_command`` (``grapharc.tools.reaper.launch``, which calls ``run`` under
``python -I`` with GraphARC's own folders on the path: ``-I`` keeps the workspace and ``PYTHON*``
variables out of the reaper's imports) in a session of its own, with the command's environment
and the command's stdout and stderr. It marks itself non-dumpable and a subreaper, starts ARGV
in CWD with stdin on /dev/null, the call's limits set and, as root, ``CAP_SYS_PTRACE`` dropped
from the program's bounding set, then supervises it (``grapharc.tools.reaper.supervise``).
"""

from __future__ import annotations

import os
import subprocess
import sys

from grapharc.harness.limits import CallLimits
from grapharc.harness.process_controls import become_subreaper, drop_ptrace_capability, make_undumpable
from grapharc.tools.reaper.supervise import report, supervise


def prepare(limits: CallLimits) -> None:
    """In the program's process, before it runs: its limits, and no way to trace the agent."""
    limits.apply()
    drop_ptrace_capability()


def main(argv: list[str]) -> int:
    """Start the command and supervise it; 2 on a malformed invocation, 127 if it cannot start."""
    if len(argv) < 6 or argv[4] != "--" or not (argv[0].isdigit() and argv[1].isdigit()):
        print("usage: python -I -m grapharc.tools.reaper STOP STATUS LIMITS CWD -- ARGV...", file=sys.stderr)
        return 2
    stop_fd, status_fd = int(argv[0]), int(argv[1])
    limits, cwd, program = CallLimits.from_json(argv[2]), argv[3], argv[5:]
    make_undumpable()
    become_subreaper()
    try:
        child = subprocess.Popen(program, cwd=cwd, stdin=subprocess.DEVNULL, close_fds=True,
                                 preexec_fn=lambda: prepare(limits))  # single-threaded: preexec is safe
    except OSError as exc:
        report(status_fd, f"failed {exc.errno or 0}\n".encode())
        return 127
    except subprocess.SubprocessError:
        report(status_fd, b"failed 0\n")
        return 127
    supervise(child.pid, stop_fd, status_fd)
    return 0


def run(argv: list[str]) -> None:
    """``main``, then exit at once: the program was waited for by pid, so Popen's finalizer is skipped."""
    os._exit(main(argv))


if __name__ == "__main__":
    run(sys.argv[1:])
