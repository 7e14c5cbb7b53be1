"""Idempotency records for side-effecting tool calls, kept where the thread's state is kept.

A call that may change something (a write, a command) gets a key: the thread, the agent node,
the model step, the call's index in that step, and a digest of the tool and its validated
arguments. The key is recorded as *started* before the call runs and *completed*, with the
result, after; both records are pending writes pinned on the thread's latest checkpoint
through its checkpointer (LangGraph ignores writes of no task of its own), so they are on disk
before and after the call, whichever checkpointer the graph uses. A node re-run after a kill
finds them: a completed call is answered from its record instead of running again (a kill
between "executed" and "checkpointed" repeats no write); a call started and never completed
may or may not have happened, so it is not repeated blindly. Without a checkpointer the
records live in memory for the run (nothing can resume it anyway).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER

from grapharc.runtime.resume import thread_config

LEDGER_CHANNEL = "__grapharc_tool_calls__"
STARTED, COMPLETED = "started", "completed"


_CANONICAL = json.JSONEncoder(sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
"""The digest's encoder, built once: ``json.dumps`` given options builds a new one every call."""


def digest(tool: str, arguments: dict[str, Any]) -> str:
    """A stable digest of a tool and its validated arguments."""
    text = _CANONICAL.encode({"tool": tool, "arguments": arguments})
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CallRecord:
    """What an earlier attempt recorded for one key."""

    state: str
    result: Any = None


class ToolCallLedger:
    """The idempotency records of one thread, for one run of its tools node (see the module docstring).

    The records already on the thread's latest checkpoint are read once, on first use, and kept
    with those this node adds: the latest checkpoint cannot change while the node runs, so reading
    it again for every call (all of its pending writes each time) made a reply of n calls cost
    O(n^2) reads and decodes."""

    def __init__(self, checkpointer: BaseCheckpointSaver[Any] | None, thread_id: str) -> None:
        self.checkpointer = checkpointer
        self.thread_id = thread_id
        self._records: dict[str, CallRecord] | None = None
        self._pinned_on: RunnableConfig | None = None

    @classmethod
    def of(cls, config: RunnableConfig) -> ToolCallLedger:
        """The ledger of the thread a node's ``config`` runs on (its checkpointer, if any)."""
        configurable = config.get("configurable") or {}
        saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
        return cls(saver if isinstance(saver, BaseCheckpointSaver) else None,
                   str(configurable.get("thread_id", "")))

    @staticmethod
    def key(thread_id: str, node: str, step: int, index: int, call_digest: str) -> str:
        return f"{thread_id}:{node}:{step}:{index}:{call_digest}"

    def recorded(self, key: str) -> CallRecord | None:
        """What an earlier attempt recorded for ``key`` (a completed record wins), if anything."""
        return self._loaded().get(key)

    def started(self, key: str) -> None:
        """Record that the call is about to run."""
        self._pin({"key": key, "state": STARTED})

    def completed(self, key: str, result: Any) -> None:
        """Record that the call ran, and what it returned."""
        self._pin({"key": key, "state": COMPLETED, "result": result})

    def _loaded(self) -> dict[str, CallRecord]:
        """The records so far: the latest checkpoint's, read on first use, and this node's own."""
        if self._records is not None:
            return self._records
        records: dict[str, CallRecord] = {}
        self._records = records
        latest = self.checkpointer.get_tuple(thread_config(self.thread_id)) if self.checkpointer else None
        if latest is None:  # no checkpointer, or no checkpoint yet: nothing can resume, memory will do
            return records
        conf = latest.config["configurable"]
        self._pinned_on = thread_config(conf["thread_id"], conf["checkpoint_id"])
        for _task, channel, value in latest.pending_writes or []:
            if channel == LEDGER_CHANNEL and isinstance(value, dict) and isinstance(value.get("key"), str):
                self._note(records, value)
        return records

    @staticmethod
    def _note(records: dict[str, CallRecord], record: dict[str, Any]) -> None:
        """Keep ``record`` unless its key already has the one that wins (the first, or a completed one)."""
        key = record["key"]
        if key not in records or record.get("state") == COMPLETED:
            records[key] = CallRecord(str(record.get("state")), record.get("result"))

    def _pin(self, record: dict[str, Any]) -> None:
        records = self._loaded()
        if self._pinned_on is not None and self.checkpointer is not None:
            self.checkpointer.put_writes(self._pinned_on, [(LEDGER_CHANNEL, record)],
                                         f"grapharc:tool:{uuid4()}")
        self._note(records, record)
