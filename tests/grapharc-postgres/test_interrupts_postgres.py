"""Interrupts beyond approvals over PostgreSQL, through ``langgraph-sdk`` on a real ``grapharc
serve``: a plain interrupt answered with a dict (its value on the trail), breakpoints continued
without input (a thread paused on no approval claimed), a goto recorded on the trail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SERVER_TESTS = Path(__file__).resolve().parents[1] / "grapharc-server"
sys.path.insert(0, str(SERVER_TESTS))

from interrupt_stories import (  # noqa: E402
    a_goto_is_applied_and_on_the_trail,
    a_plain_interrupts_dict_is_shown_whole_and_answered_with_a_dict,
    breakpoints_stop_before_and_after_and_a_run_without_input_goes_on,
)
from server_process import ServerProcess, grapharc_serve  # noqa: E402


def test_interrupt_stories_pass_over_postgres(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SERVER_TESTS), os.environ.get("PYTHONPATH", "")]))
    with ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", postgres_uri,
                                      "--registry", "api_graphs:register")) as server:
        url = server.json_announcement()["url"]
        a_plain_interrupts_dict_is_shown_whole_and_answered_with_a_dict(url)
        breakpoints_stop_before_and_after_and_a_run_without_input_goes_on(url)
        a_goto_is_applied_and_on_the_trail(url)
