"""``--by tenant`` and ``--by label:KEY``: which group an event's figures are added to.

A tenant and labels are set per run (on ``run_start``, or on any event); an event that
does not carry its own inherits its run's, so every event of a tenant's run lands in that
tenant's group; tenants are grouped case-insensitively (``grapharc.config.tenants``). Events of a
run with no tenant (or no such label) go to ``(none)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grapharc.config.tenants import tenant_name
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
            value = _tenant_group(tenant if tenant is not None else run.tenant)
        else:
            labels = event.get(LABELS)
            value = labels.get(self.label) if isinstance(labels, dict) else None
            if value is None:
                value = run.labels.get(self.label)
        return NO_GROUP if value is None else str(value)


def _tenant_group(tenant: Any) -> str | None:
    """A tenant as its group is named: case-folded (a trace written before tenants were folded may
    spell one tenant ``ACME`` and ``acme``), or no group for none (or a blank one)."""
    try:
        return None if tenant is None else tenant_name(str(tenant))
    except ValueError:
        return None


def parse_grouping(spec: str) -> Grouping:
    """``tenant`` or ``label:KEY``; anything else raises GroupingError."""
    if spec == "tenant":
        return Grouping(spec, None)
    prefix, _, label = spec.partition(":")
    if prefix == "label" and label:
        return Grouping(spec, label)
    raise GroupingError(f"cannot group by {spec!r}: use --by tenant or --by label:KEY",
                        hint="for example --by label:team")
