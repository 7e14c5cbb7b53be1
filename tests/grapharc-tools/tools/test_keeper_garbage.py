"""A keeper is a fork of its caller, garbage included: a collection in the keeper would run the
finalizers of the caller's garbage, and one closing a descriptor number the caller had closed and
reused (the numbers the keeper's own pipes take) would cut the keeper off from its caller. The
keeper never collects, so the call ends as its program did."""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess

from grapharc.tools.reaper.keeper import fork_keeper

ARMED = {"on": True}
"""Whether a ``Stale`` closes its number when collected: on in the keeper's copy, off here."""


class Stale:
    """Garbage in a reference cycle whose finalizer closes a descriptor number it no longer owns."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.cycle = self

    def __del__(self) -> None:
        if ARMED["on"]:
            with contextlib.suppress(OSError):
                os.close(self.fd)


def test_the_keeper_never_runs_its_callers_finalizers_and_reports_the_exit() -> None:
    numbers = [fd for pair in (os.pipe(), os.pipe()) for fd in pair]
    for fd in numbers:
        os.close(fd)  # the numbers the keeper's two pipes are about to take
    gc.disable()  # the garbage is made uncollected, then left for the next automatic collection
    try:
        for fd in numbers:
            Stale(fd)
    finally:
        gc.enable()

    def start() -> int:  # in the keeper: allocate enough to trigger automatic collections
        crowd = [[index] for index in range(200_000)]
        del crowd
        return subprocess.Popen(["true"]).pid

    ARMED["on"] = True
    keeper = fork_keeper(start)
    ARMED["on"] = False  # here the garbage may now be collected harmlessly
    gc.collect()
    try:
        assert keeper.exit_code() == 0
    finally:
        keeper.close()
