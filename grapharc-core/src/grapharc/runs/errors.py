"""The errors a run store raises on purpose, each naming the run or thread at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class RunError(GraphARCError):
    """Something about a durable run that cannot be done as asked."""


class RunStoreError(RunError):
    """A run store that cannot be opened, read or written."""


class UnknownRunError(RunError):
    """No run of the thread has the run id given."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        super().__init__(f"thread {thread_id} has no run {run_id}",
                         hint="list the thread's runs with GET /threads/{thread_id}/runs")


class ThreadBusyError(RunError):
    """A run that may not wait (``reject``) was asked of a thread with a run pending or running."""

    def __init__(self, thread_id: str, run_id: str, status: str) -> None:
        super().__init__(f"thread {thread_id} is busy: run {run_id} is {status}",
                         hint="wait for that run (GET .../join) or cancel it, or send "
                              "multitask_strategy 'enqueue' to run after it")
        self.run_id = run_id


class RunInFlightError(RunError):
    """A run still pending or running was asked to go (only an ended run's record may be deleted)."""

    def __init__(self, thread_id: str, run_id: str, status: str) -> None:
        super().__init__(f"run {run_id} of thread {thread_id} is {status}; only an ended run can be deleted",
                         hint="cancel it (POST .../cancel?wait=1), then delete it")
