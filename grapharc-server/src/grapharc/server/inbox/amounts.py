"""The amounts the inbox lists beside each pending approval: what is at stake, at a glance.

An amount is a field the node's approvers are declared to see (``Approvers.shown_fields``) with a
money format (``money:EUR``, ``cents:EUR``), read from the thread's newest checkpoint and written for people
(``humane.formatted``). Only a graph this server registered declares them; an approval of another
graph, or of a node that declares no money field, lists none (its page still shows its evidence).
"""

from __future__ import annotations

from collections.abc import Iterable

from grapharc.server.inbox import humane
from grapharc.server.service.sessions import Pending, Sessions
from grapharc.session.approvals import CENTS, MONEY, Shown, shown_format

Amount = tuple[str, str]
"""A label and the amount as people write it: ("Amount", "EUR 24,000.00")."""


def amounts(sessions: Sessions, pending: Iterable[Pending]) -> dict[str, list[Amount]]:
    """The amounts of each of ``pending`` by approval id (a blocking read: run it in a worker thread)."""
    found: dict[str, list[Amount]] = {}
    for item in pending:
        fields = _money_fields(sessions, item)
        if not fields:
            continue
        values = sessions.saved_values(item.approval.thread_id)  # as the approval's page reads them
        written = [(shown.label or humane.label(shown.field),
                    humane.formatted(values[shown.field], shown.format))
                   for shown in fields if shown.field in values]
        found[item.approval.approval_id] = [(label, text) for label, text in written if text is not None]
    return found


def _money_fields(sessions: Sessions, item: Pending) -> list[Shown]:
    """The fields of ``item``'s node declared shown with a money format (none for a graph not served here)."""
    if not sessions.serves(item.graph):
        return []
    declared = sessions.manager.graphs.get(item.graph).shown_fields(item.approval.node) or ()
    return [shown for shown in declared
            if shown.format is not None and shown_format(shown.format)[0] in (MONEY, CENTS)]
