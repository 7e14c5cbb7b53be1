"""The CLI's contract: --json documents, exit codes 0/1/2, no traceback, a fast --help."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.smoke


HEAVY = ("langgraph", "langchain_core", "langchain", "langchain_openai", "fastapi", "uvicorn",
         "docker", "ladybug", "openai", "psycopg", "psycopg_pool")


def grapharc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def test_plugins_json_lists_every_installed_distribution_and_what_it_registered():
    result = grapharc("plugins", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    by_name = {d["name"]: d for d in document["distributions"]}
    assert set(by_name) >= {"grapharc-core", "grapharc-gateway", "grapharc-tools",
                            "grapharc-memory-sqlite", "grapharc-memory-ladybug", "grapharc-server",
                            "grapharc-postgres"}
    assert by_name["grapharc-core"]["registered"]["model_backends"] == ["mock"]
    assert "openai" in by_name["grapharc-gateway"]["registered"]["model_backends"]
    assert by_name["grapharc-server"]["registered"]["commands"] == ["serve"]
    assert by_name["grapharc-postgres"]["registered"]["commands"] == ["db"]
    assert all(d["status"] == "loaded" for d in by_name.values())


def test_plugins_tells_two_stores_of_one_scheme_apart_by_what_they_store():
    """Core's sqlite stores sessions and runs, grapharc-memory-sqlite's stores claims and items: each
    distribution lists its own ``scheme:kind`` keys, and the human view groups them by scheme."""
    document = json.loads(grapharc("plugins", "--json").stdout)
    by_name = {d["name"]: d["registered"] for d in document["distributions"]}
    assert "sqlite:sessions" in by_name["grapharc-core"]["stores"]
    assert "sqlite:claims" not in by_name["grapharc-core"]["stores"]
    assert by_name["grapharc-memory-sqlite"]["stores"] == ["sqlite:artifacts", "sqlite:claims",
                                                           "sqlite:items"]
    shown = grapharc("plugins").stdout
    assert "sqlite (artifacts, claims, items)" in shown
    assert "sqlite (assistants, checkpoints, crons, runs, sessions, webhooks)" in shown


def test_an_empty_load_list_leaves_only_core():
    document = json.loads(grapharc("plugins", "--json",
                                   env={"GRAPHARC_LOAD_PLUGINS": ""}).stdout)
    statuses = {d["name"]: d["status"] for d in document["distributions"]}
    assert statuses.pop("grapharc-core") == "loaded"
    assert set(statuses.values()) == {"disabled"}


def test_the_load_list_selects_distributions_by_name():
    document = json.loads(grapharc("plugins", "--json",
                                   env={"GRAPHARC_LOAD_PLUGINS": "grapharc-tools"}).stdout)
    loaded = sorted(d["name"] for d in document["distributions"] if d["status"] == "loaded")
    assert loaded == ["grapharc-core", "grapharc-tools"]


def test_version_prints_the_shared_version():
    from grapharc import __version__

    result = grapharc("version")
    assert result.returncode == 0 and result.stdout.strip() == f"grapharc {__version__}"


@pytest.mark.parametrize("args", [["plugins", "--no-such-flag"], ["no-such-command"]])
def test_a_usage_error_exits_2_with_one_line_and_no_traceback(args):
    result = grapharc(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_a_usage_error_honours_json():
    result = grapharc("plugins", "--no-such-flag", "--json")
    assert result.returncode == 2
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["error"]["code"] == "UsageError"
    assert "--no-such-flag" in document["error"]["message"]


def test_no_arguments_shows_usage_on_stderr_and_exits_2():
    result = grapharc()
    assert result.returncode == 2 and "Usage:" in result.stderr and result.stdout == ""


def test_help_and_plugins_import_no_heavy_dependency():
    probe = (
        "import sys\n"
        "from grapharc.cli.main import run\n"
        "for args in (['--help'], ['plugins', '--json']):\n"
        "    run(args)\n"
        f"heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert "HEAVY=" in result.stderr
    assert result.stderr.rsplit("HEAVY=", 1)[1] == ""
