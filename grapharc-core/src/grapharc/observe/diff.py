"""``grapharc diff``: what changed between two runs — path, state, tokens and outcome.

Both runs are read in one pass of the trace. Two runs are identical when they executed
the same node sequence, folded to the same state, spent the same tokens (in total and per
node) and ended the same way; timings and ids are expected to differ and are not compared.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grapharc.observe.errors import UnknownRunError
from grapharc.observe.fold import Reducer, StateFolder
from grapharc.observe.tally import Tally
from grapharc.trace import schema as ts
from grapharc.trace.reader import TraceReader

WINDOW = 5
"""Node executions shown on each side of the first point where two paths diverge."""


@dataclass
class _RunDigest:
    """What diff compares of one run."""

    tally: Tally = field(default_factory=Tally)
    path: list[str] = field(default_factory=list)
    folder: StateFolder = field(default_factory=StateFolder)

    def add(self, event: dict[str, Any]) -> None:
        self.tally.add(event)
        node = event.get(ts.NODE)
        phase = event.get(ts.PHASE)
        if node is None or phase == ts.ADMISSION:
            return
        if phase == ts.START:
            self.path.append(node)
        elif phase == ts.END:
            self.folder.apply(event.get(ts.STATE_DELTA))

    def outcome(self) -> dict[str, Any]:
        nodes = self.tally.nodes.values()
        return {"status": self.tally.shown_status, "stop_reason": self.tally.stop_reason,
                "failed": sum(s.failed for s in nodes), "unfinished": self.tally.unfinished}


@dataclass
class RunDiff:
    """The differences between run ``a`` and run ``b``, section by section."""

    path: str
    run_a: str
    run_b: str
    path_diff: dict[str, Any]
    state_diff: dict[str, Any]
    tokens_diff: dict[str, Any]
    outcome_diff: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when path, state, tokens and outcome are all the same."""
        return all(section["same"] for section in
                   (self.path_diff, self.state_diff, self.tokens_diff, self.outcome_diff))

    def to_document(self) -> dict[str, Any]:
        """The JSON document ``grapharc diff --json`` prints."""
        return {"ok": True, "path": self.path, "identical": self.identical,
                "runs": {"a": self.run_a, "b": self.run_b}, "node_path": self.path_diff,
                "state": self.state_diff, "tokens": self.tokens_diff, "outcome": self.outcome_diff,
                **({"warnings": self.warnings} if self.warnings else {})}


def diff(path: str | os.PathLike[str], run_a: str, run_b: str, *,
         reducers: Mapping[str, str | Reducer] | None = None) -> RunDiff:
    """Compare two runs of the trace at ``path`` (state folded with ``reducers``)."""
    digests = {run_id: _RunDigest(folder=StateFolder(reducers)) for run_id in (run_a, run_b)}
    reader = TraceReader(path)
    for event in reader:
        digest = digests.get(event.get(ts.RUN_ID, ""))
        if digest is not None:
            digest.add(event)
    for run_id, digest in digests.items():
        if not digest.tally.events:
            raise UnknownRunError(reader.name, run_id)
    a, b = digests[run_a], digests[run_b]
    return RunDiff(reader.name, run_a, run_b, _path_diff(a.path, b.path),
                   _state_diff(a.folder.state, b.folder.state), _tokens_diff(a.tally, b.tally),
                   {"same": a.outcome() == b.outcome(), "a": a.outcome(), "b": b.outcome()},
                   reader.warnings())


def _path_diff(a: list[str], b: list[str]) -> dict[str, Any]:
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    section: dict[str, Any] = {"same": first is None, "length": {"a": len(a), "b": len(b)},
                               "first_divergence": first}
    if first is not None:
        low = max(first - WINDOW, 0)
        section["window_start"] = low
        section["a"] = a[low:first + WINDOW + 1]
        section["b"] = b[low:first + WINDOW + 1]
    return section


def _state_diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    changed = {name: {"a": a[name], "b": b[name]} for name in a.keys() & b.keys() if a[name] != b[name]}
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    return {"same": not (changed or only_a or only_b), "changed": dict(sorted(changed.items())),
            "only_a": {name: a[name] for name in only_a}, "only_b": {name: b[name] for name in only_b}}


def _tokens_diff(a: Tally, b: Tally) -> dict[str, Any]:
    nodes = {}
    for name in list(dict.fromkeys([*a.nodes, *b.nodes])):
        tokens_a = a.nodes[name].usage.tokens if name in a.nodes else 0
        tokens_b = b.nodes[name].usage.tokens if name in b.nodes else 0
        if tokens_a != tokens_b:
            nodes[name] = {"a": tokens_a, "b": tokens_b}
    total_a, total_b = a.usage.tokens, b.usage.tokens
    outside = {"a": a.outside.tokens, "b": b.outside.tokens}
    return {"same": total_a == total_b and not nodes and outside["a"] == outside["b"],
            "a": total_a, "b": total_b, "nodes": nodes, "outside_nodes": outside}
