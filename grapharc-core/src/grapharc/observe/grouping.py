"""``--by tenant`` and ``--by label:KEY``: which group an event's figures are added to.

A tenant and labels are set per run (on ``run_start``, or on any event); an event that
does not carry its own inherits its run's, so every event of a tenant's run lands in that
tenant's group. Events of a run with no tenant (or no such label) go to ``(none)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grapharc.observe.errors import GroupingError
from grapharc.observe.tally import Tally
from grapharc.trace.schema import LABELS, TENANT

NO_GROUP = "(none)"


@dataclass(frozen=True, slots=True)
class Grouping:
    """A way of keying events: by tenant, or by the value of one label."""

    spec: str
    label: str | None

    def key(self, event: dict[str, Any], run: Tally) -> str:
        """The group ``event`` belongs to, given the tally of its run."""
        if self.label is None:
            tenant = event.get(TENANT)
            value = tenant if tenant is not None else run.tenant
        else:
            labels = event.get(LABELS)
            value = labels.get(self.label) if isinstance(labels, dict) else None
            if value is None:
                value = run.labels.get(self.label)
        return NO_GROUP if value is None else str(value)


def parse_grouping(spec: str) -> Grouping:
    """``tenant`` or ``label:KEY``; anything else raises GroupingError."""
    if spec == "tenant":
        return Grouping(spec, None)
    prefix, _, label = spec.partition(":")
    if prefix == "label" and label:
        return Grouping(spec, label)
    raise GroupingError(f"cannot group by {spec!r}: use --by tenant or --by label:KEY",
                        hint="for example --by label:team")
