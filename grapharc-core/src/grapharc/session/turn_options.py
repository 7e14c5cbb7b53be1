"""What a run asks of the turn that carries it, besides its budget and watchers, as one value.

A server's run hands every turn it drives (a start, a carry-on, a continue, a recovery, a fork) the
same few things: where its live events go, the run id its checkpoints carry, the breakpoints it
stops at, a client's goto and update, and the caller's config. They travel together from the
worker through ``SessionManager`` to the turn, so they are one frozen value rather than five
keywords on every method between.
"""

from __future__ import annotations

from dataclasses import dataclass

from grapharc.runtime.caller_config import CallerConfig
from grapharc.session.breakpoints import Breakpoints
from grapharc.session.directives import Directive
from grapharc.session.live import LiveSink


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """``live``: given the turn's live chunks (``grapharc.session.live``); ``run_id``: marks every
    checkpoint the turn writes (LangGraph's ``run_id`` metadata), so a rollback of that run can
    discard them; ``breakpoints``: where the turn stops (``grapharc.session.breakpoints``);
    ``directive``: a client's goto and update, applied in the first pass
    (``grapharc.session.directives``); ``caller``: the config a run's caller set, checked against
    the graph's declarations beforehand, beneath the turn's own (``grapharc.runtime.caller_config``);
    ``values_read``: a reader here renders the state after each node from the turn's scans (a stream
    in the ``values`` mode), so a scan prepares LangGraph snapshots for it, the newest even with no
    write saved on it yet (else a scan only names their tasks, ``grapharc.session.named``, and such
    a reader reads the values from disk)."""

    live: LiveSink | None = None
    run_id: str | None = None
    breakpoints: Breakpoints | None = None
    directive: Directive | None = None
    caller: CallerConfig | None = None
    values_read: bool = True


NO_OPTIONS = TurnOptions()
