"""The choices the demo stages offer, kept free of heavy imports so the CLI can list them fast."""

from __future__ import annotations

from enum import StrEnum


class Failure(StrEnum):
    """Stage 0: how the injected failure between the temp write and the rename happens."""

    ERROR = "error"
    KILL = "kill"


class Task(StrEnum):
    """Stage 1: which problem the loop works on."""

    IMPOSSIBLE = "impossible"
    SOLVABLE = "solvable"
    UNBOUNDED = "unbounded"


class ClaimScenario(StrEnum):
    """Stage 2: which replies the scripted model gives (a real model gives its own)."""

    INJECTION = "injection"
    BAD_OUTPUT = "bad-output"
    CLEAN = "clean"


class FanoutScenario(StrEnum):
    """Stage 3: isolation crashes shard 1 and hangs shard 2; overlap fails no worker."""

    ISOLATION = "isolation"
    OVERLAP = "overlap"


class Case(StrEnum):
    """Stage 4: whether the logs hold the root cause."""

    IMPOSSIBLE = "impossible"
    SOLVABLE = "solvable"


class ReviewScenario(StrEnum):
    """Capstone: how the scripted reviewer judges (a real reviewer judges for itself)."""

    HONEST = "honest"
    REJECT_ALL = "reject-all"
