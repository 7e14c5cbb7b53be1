"""A tally per run (and per group, with ``--by``) over one pass of a trace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grapharc.observe.grouping import Grouping
from grapharc.observe.tally import Pricer, Tally, Usage
from grapharc.trace.schema import RUN_ID


class Ledger:
    """Per-run tallies, and per-group ones when a grouping is given.

    ``group_run`` limits the groups to one run's events (a run's breakdown by label);
    without it every run's events are grouped.
    """

    def __init__(self, price: Pricer | None = None, grouping: Grouping | None = None,
                 group_run: str | None = None) -> None:
        self.price = price
        self.grouping = grouping
        self.group_run = group_run
        self.runs: dict[Any, Tally] = {}
        self.groups: dict[str, Tally] = {}

    def feed(self, events: Iterable[dict[str, Any]]) -> Ledger:
        """Fold every event in; returns self."""
        runs, price, grouping, group_run = self.runs, self.price, self.grouping, self.group_run
        for event in events:
            run_id = event.get(RUN_ID)
            tally = runs.get(run_id)
            if tally is None:
                tally = runs[run_id] = Tally(price)
            tally.add(event)
            if grouping is not None and (group_run is None or run_id == group_run):
                key = grouping.key(event, tally)
                group = self.groups.get(key)
                if group is None:
                    group = self.groups[key] = Tally(price)
                group.add(event)
        return self

    def threads(self) -> dict[Any, list[Tally]]:
        """The run tallies of each thread, in order of first appearance."""
        threads: dict[Any, list[Tally]] = {}
        for tally in self.runs.values():
            threads.setdefault(tally.thread_id, []).append(tally)
        return threads


def total_usage(tallies: Iterable[Tally]) -> Usage:
    """The summed usage of several tallies."""
    total = Usage()
    for tally in tallies:
        total.merge(tally.usage)
    return total
