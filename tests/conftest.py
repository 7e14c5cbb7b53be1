"""Suite-wide guard: a checkpoint type LangGraph's serializer does not allowlist becomes a warning.

LangGraph only logs such a read ("Deserializing unregistered type ...", once per process,
or "Blocked deserialization of ..." under ``LANGGRAPH_STRICT_MSGPACK``), which no test
would notice. It also emits a serde event every time, so each test listens for them and
re-raises every type it saw as a Python warning worded like LangGraph's log line; the
root pyproject's ``filterwarnings`` then turns those warnings into errors.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener

_WORDING = {
    "msgpack_unregistered_allowed": "Deserializing unregistered type {module}.{name} from checkpoint",
    "msgpack_blocked": "Blocked deserialization of {module}.{name}: not in allowed_msgpack_modules",
}


# required.py for every folder's tests; appended, so tests/packaging never shadows the packaging library
sys.path.append(str(Path(__file__).parent))


class UnregisteredCheckpointTypeWarning(UserWarning):
    """A checkpoint held a type that the checkpointer's serializer does not allowlist."""


@pytest.fixture(autouse=True)
def checkpoint_types_are_allowlisted() -> Iterator[None]:
    """Warn, once per type, for every unallowlisted type this test read back from a checkpoint."""
    seen: list[SerdeEvent] = []
    unregister = register_serde_event_listener(seen.append)
    try:
        yield
    finally:
        unregister()
    messages = [_WORDING[event["kind"]].format(**event) for event in seen if event["kind"] in _WORDING]
    for message in dict.fromkeys(messages):
        warnings.warn(message + " (allowlist it: see grapharc.runtime.serde)",
                      UnregisteredCheckpointTypeWarning, stacklevel=1)
