"""Starting a command under a keeper of its own (``run_command``'s side).

``start_kept`` forks a keeper (``keeper``) that starts the program in CWD with the command's
environment, stdin on /dev/null, stdout and stderr on pipes read here, the call's ``CallLimits``
set and, as root, ``CAP_SYS_PTRACE`` dropped from its bounding set (so it cannot read the
agent's memory). ``KeptCommand.channel`` becomes readable when the program has ended and
everything it left is gone; ``stop()`` ends them all now (a timeout).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from typing import IO

from grapharc.harness.limits import CallLimits
from grapharc.harness.process_controls import drop_ptrace_capability
from grapharc.tools.reaper.keeper import Keeper, fork_keeper, reap_finished


class KeptCommand(Keeper):
    """A program running under its keeper, with the read ends of its stdout and stderr."""

    stdout: IO[bytes]
    stderr: IO[bytes]

    def close(self) -> None:
        """Release the pipes."""
        super().close()
        self.stdout.close()
        self.stderr.close()


def start_kept(argv: list[str], cwd: str, env: Mapping[str, str], limits: CallLimits) -> KeptCommand:
    """Start ``argv`` under a keeper of its own (see the module docstring)."""
    reap_finished()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()

    def prepare() -> None:  # in the program's process, between fork and exec
        limits.apply()
        drop_ptrace_capability()

    # In the keeper: the started program, held so that its finalizer never runs. Popen's finalizer
    # polls the process and would reap a program that exited quickly before the keeper waited for
    # it, losing its exit status (the keeper leaves through os._exit: no finalizer runs there).
    programs: list[subprocess.Popen[bytes]] = []

    def start() -> int:
        program = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,  # noqa: S603 -- argv list, no shell: the tool call's command, admitted by the rules
                                   stdout=out_write, stderr=err_write, close_fds=True,
                                   preexec_fn=prepare)  # the keeper has one thread: preexec is safe
        programs.append(program)
        os.close(out_write)
        os.close(err_write)
        return program.pid

    try:
        keeper = fork_keeper(start, keep=(out_write, err_write))
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
    command = KeptCommand(keeper.pid, keeper.stop_fd, keeper.channel)
    command.stdout = os.fdopen(out_read, "rb", buffering=0)
    command.stderr = os.fdopen(err_read, "rb", buffering=0)
    return command
