"""Hand-written traces for the observe tests: events in the exact shape the kernel writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


class TraceBuilder:
    """Builds a JSONL trace event by event, with a clock that ticks 10 ms per event."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.clock = 1_790_000_000.0

    def _ts(self) -> float:
        self.clock += 0.01
        return round(self.clock, 3)

    def add(self, event: str, run: str, **fields: Any) -> TraceBuilder:
        ts = fields.pop("ts", None)
        base = {"phase": event, "run_id": run, "thread_id": fields.pop("thread", f"thread-{run}"),
                "attempt": fields.pop("attempt", 1)}
        self.events.append({**base, **fields, "ts": self._ts() if ts is None else ts})
        return self

    def run_start(self, run: str, graph: str = "g", **fields: Any) -> TraceBuilder:
        return self.add("run_start", run, graph=graph, budget={"max_tokens": None}, **fields)

    def run_end(self, run: str, status: str = "completed", stop_reason: str = "completed",
                **fields: Any) -> TraceBuilder:
        return self.add("run_end", run, graph=fields.pop("graph", "g"), status=status,
                        stop_reason=stop_reason, **fields)

    def start(self, run: str, node: str, step: int, graph: str = "g", **fields: Any) -> TraceBuilder:
        return self.add("start", run, graph=graph, node=node, step=step, **fields)

    def end(self, run: str, node: str, step: int, graph: str = "g", delta: dict | None = None,
            tokens: int = 0, cost_usd: float | None = None, duration_ms: float = 5.0,
            **fields: Any) -> TraceBuilder:
        return self.add("end", run, graph=graph, node=node, step=step, state_delta=delta or {},
                        duration_ms=duration_ms, tokens=tokens, cost_usd=cost_usd, **fields)

    def error(self, run: str, node: str, step: int, graph: str = "g", message: str = "boom",
              exc_type: str = "ValueError", duration_ms: float = 2.0, **fields: Any) -> TraceBuilder:
        return self.add("error", run, graph=graph, node=node, step=step, duration_ms=duration_ms,
                        exception={"type": exc_type, "message": message}, **fields)

    def node(self, run: str, node: str, step: int, **fields: Any) -> TraceBuilder:
        """A node execution: its start and its end."""
        identity = {key: fields[key] for key in ("graph", "thread", "attempt") if key in fields}
        return self.start(run, node, step, **identity).end(run, node, step, **fields)

    def write(self) -> Path:
        self.path.write_text("".join(json.dumps(e) + "\n" for e in self.events), encoding="utf-8")
        return self.path


@pytest.fixture
def builder(tmp_path: Path) -> TraceBuilder:
    return TraceBuilder(tmp_path / "trace.jsonl")
