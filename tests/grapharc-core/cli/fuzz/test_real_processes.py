"""A few hostile inputs through the installed entry point in a real process: stdin closed,
a timeout, junk in the plugin switches. Exit 0, 1 or 2, one JSON document, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def grapharc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env={**base, **(env or {})}, timeout=120)


def one_document(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr and "GraphARC bug" not in result.stdout + result.stderr

    def refuse(constant: str) -> None:
        raise AssertionError(constant)

    document = json.loads(result.stdout, parse_constant=refuse)
    assert isinstance(document["ok"], bool)
    return document


@pytest.mark.parametrize("args", [["trace", "fifo"], ["run", "fifo"],
                                  ["cost", "t.jsonl", "--rate-card", "fifo"],
                                  ["plan", "goal", "--config", "fifo"]])
def test_a_fifo_given_as_a_file_is_refused_at_once(workdir, args):
    document = one_document(grapharc(*args, "--json"))
    assert document["ok"] is False and "FIFO" in document["error"]["message"]


@pytest.mark.parametrize("env", [
    {"GRAPHARC_LOAD_PLUGINS": "nonexistent,\x1b[31m"}, {"GRAPHARC_STRICT_PLUGINS": "maybe"},
    {"GRAPHARC_LOAD_PLUGINS": "x" * 10_000}, {"GRAPHARC_DEBUG": "0", "GRAPHARC_MAX_TOKENS": "nan"},
])
@pytest.mark.parametrize("args", [["plugins"], ["version"], ["kinds"]])
def test_junk_in_the_plugin_and_setting_switches_never_crashes(workdir, env, args):
    one_document(grapharc(*args, "--json", env=env))


def test_a_huge_budget_in_a_real_run_is_refused_naming_the_option(workdir):
    document = one_document(grapharc("run", "graph.json", "--max-seconds", "1e308", "--json"))
    assert "'--max-seconds'" in document["error"]["message"]
