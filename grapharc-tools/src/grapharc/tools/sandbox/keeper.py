"""The keeper of one sandboxed call: a forked subreaper between the executor and the tool's child.

The executor forks the keeper; the keeper marks itself a subreaper and forks the child that runs
the tool (``child.serve``) with the call's ``CallLimits`` set on it (its address space on top of
what the fork already maps). It then supervises the child as a command's reaper does
(``grapharc.tools.reaper.supervise``): when the child exits, or the executor stops the call (a
timeout), everything the child left (it cannot start processes under the audit hook; this holds
if something gets past it) is killed and reaped before the executor hears how the child ended.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NoReturn

from grapharc.harness.limits import CallLimits
from grapharc.harness.process_controls import become_subreaper
from grapharc.tools.reaper.supervise import supervise
from grapharc.tools.sandbox.child import blank_inherited_descriptors


def keep(serve: Callable[[int], NoReturn], reply_fd: int, stop_fd: int, status_fd: int,
         limits: CallLimits) -> NoReturn:
    """Run in the forked keeper: fork the tool's child, supervise it, exit. Descriptors inherited
    from the executor's process are blanked first, so another call's stop pipe is not held open."""
    os.setpgid(0, 0)
    become_subreaper()
    blank_inherited_descriptors(keep=(0, 1, 2, reply_fd, stop_fd, status_fd))
    child = os.fork()
    if child == 0:
        try:
            os.close(stop_fd)
            os.close(status_fd)
            limits.apply(forked=True)
            serve(reply_fd)
        finally:
            os._exit(70)  # never return into the caller's code from the child
    os.close(reply_fd)  # the child's copy is the only one: its end closes the executor's pipe
    supervise(child, stop_fd, status_fd)
    os._exit(0)
