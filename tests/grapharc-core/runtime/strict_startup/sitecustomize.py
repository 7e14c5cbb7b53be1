"""Start-up hook for the strict-msgpack test runs: every Python process of such a run imports
this (its folder is put first on PYTHONPATH) and appends each serde event LangGraph emits, a
class it refused or warned about while reading a checkpoint, to GRAPHARC_TEST_SERDE_LOG, with
the test that was running (PYTEST_CURRENT_TEST, which a test's child processes inherit)."""

import json
import os

from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener


def _record(event: SerdeEvent) -> None:
    with open(os.environ["GRAPHARC_TEST_SERDE_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({**event, "pid": os.getpid(),
                             "test": os.environ.get("PYTEST_CURRENT_TEST")}) + "\n")


if os.environ.get("GRAPHARC_TEST_SERDE_LOG"):
    register_serde_event_listener(_record)
