"""A password planted in a PostgreSQL store URI, in every form libpq reads one, never reaches an
error, a ``--json`` document or a human line: each is shown through ``grapharc.stores.masking``.

The planted URI carries a userinfo password, ``password=``, ``sslpassword=`` and a percent-encoded
``%70assword=`` (which libpq decodes to ``password``); the server trusts local users, so the URI
still opens the database and every success path is reached as well as every failure path.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from grapharc.cli.main import build_app
from grapharc.examples.demo_choices import FanoutScenario
from grapharc.examples.stage3 import run_stage3
from grapharc.testing.cli import CliResult, run_cli
from grapharc.trace.store import open_traces

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grapharc-server"))

from server_process import ServerProcess, grapharc_serve

SECRETS = ("S3cr3t-userinfo", "S3cr3t-query", "S3cr3t-ssl", "S3cr3t-encoded", "S3cr3t-token",
           "S3cr3t-broken")
QUERY = "?password=S3cr3t-query&sslpassword=S3cr3t-ssl&%70assword=S3cr3t-encoded"
SHOWN_QUERY = "?password=***&sslpassword=***&%70assword=***"


def planted(uri: str) -> str:
    """``uri`` (``postgresql://postgres@HOST/DB``) with a password in each form."""
    return uri.replace("postgres@", "postgres:S3cr3t-userinfo@", 1) + QUERY


def shown(uri: str) -> str:
    """How ``planted(uri)`` must be shown."""
    return uri.replace("postgres@", "postgres:***@", 1) + SHOWN_QUERY


def leaked(outputs: Iterable[str]) -> list[str]:
    return [secret for secret in SECRETS for output in outputs if secret in output]


@pytest.fixture(scope="module")
def app():
    return build_app()


def both(app, *args: str) -> tuple[CliResult, CliResult]:
    """The command run for people and with ``--json``."""
    return run_cli(args, app=app), run_cli([*args, "--json"], app=app)


def test_db_upgrade_and_the_session_commands_name_the_store_masked(app, postgres_uri):
    uri = planted(postgres_uri)
    first = run_cli(["db", "upgrade", "--store", uri, "--json"], app=app)
    assert first.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["store"] == shown(postgres_uri)
    again = run_cli(["db", "upgrade", "--store", uri], app=app)
    assert again.stdout.startswith(f"{shown(postgres_uri)} is already at schema version")
    outputs = [first, again, *both(app, "session", "list", "--sessions", uri),
               *both(app, "session", "status", "no-such-thread", "--sessions", uri),
               *both(app, "session", "approve", "no-such-thread", "--sessions", uri)]
    assert leaked(result.output for result in outputs) == []


@pytest.mark.parametrize(("uri", "words"), [
    ("postgresql://postgres:S3cr3t-userinfo@127.0.0.1:1/nowhere" + QUERY, "cannot open the PostgreSQL store "
     "postgresql://postgres:***@127.0.0.1:1/nowhere" + SHOWN_QUERY),
    ("postgresql://postgres:S3cr3t-userinfo@127.0.0.1:5432/no_such_database" + QUERY,
     'database "no_such_database" does not exist'),
    ("postgresql://postgres:S3cr3t-broken%zz@127.0.0.1:5432/x", 'invalid percent-encoded token: "***"'),
    ("postgresql://postgres@127.0.0.1:5432/x?token=S3cr3t-token", "?token=***"),
    ("postgresql:postgres:S3cr3t-userinfo@127.0.0.1:1/nowhere", "postgresql://postgres:***@127.0.0.1:1/"),
    ("nosuch://postgres:S3cr3t-userinfo@h/x" + QUERY, "nosuch"),
], ids=["unreachable", "no-database", "unreadable-by-libpq", "unknown-parameter", "without-slashes",
        "unknown-scheme"])
@pytest.mark.parametrize("command", [("db", "upgrade", "--store"), ("session", "list", "--sessions"),
                                     ("metrics",)], ids=["db-upgrade", "session-list", "metrics"])
def test_every_error_about_a_store_uri_shows_it_masked(app, postgres_server, uri, words, command):
    human, document = both(app, *command, uri)
    assert human.exit_code == 2 and document.exit_code == 2, human.output
    assert words in human.stderr and words in json.loads(document.stdout)["error"]["message"]
    assert leaked([human.output, document.output]) == []


def test_a_store_uri_with_no_valid_scheme_is_refused_masked(app):
    human, document = both(app, "db", "upgrade", "--store", "postgres ql://postgres:S3cr3t-userinfo@h/x")
    assert human.stderr.startswith("error: store URI 'postgres ql:***@h/x' has no valid scheme")
    assert leaked([human.output, document.output]) == []


def test_config_show_and_a_config_error_show_the_sessions_uri_masked(app, postgres_uri, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("GRAPHARC_SESSIONS", planted(postgres_uri))
    human, document = both(app, "config", "show", "--command", "serve")
    rows = {row["name"]: row for row in json.loads(document.stdout)["settings"]}
    assert rows["sessions"]["value"] == shown(postgres_uri)
    assert shown(postgres_uri) in human.stdout
    monkeypatch.delenv("GRAPHARC_SESSIONS")
    broken = tmp_path / "grapharc.toml"
    broken.write_text(f'[grapharc]\nsessions = "{planted(postgres_uri)}\\u0000"\n')
    refused, refused_json = both(app, "config", "show", "--command", "serve", "--config", str(broken))
    assert refused.exit_code == 2 and shown(postgres_uri) in refused.stderr
    assert leaked(result.output for result in (human, document, refused, refused_json)) == []


def test_the_trace_commands_name_a_trace_store_uri_masked(app, postgres_uri, tmp_path):
    uri = planted(postgres_uri)
    empty = both(app, "trace", uri)
    assert empty[0].exit_code == 1 and f"{shown(postgres_uri)}: no events" in empty[0].stderr
    trace = tmp_path / "stage3.jsonl"
    run_stage3(trace=trace, scenario=FanoutScenario.OVERLAP, worker_timeout=0.3)
    lines = trace.read_bytes().splitlines(keepends=True)
    sink = open_traces(uri).open_sink()
    try:
        sink.write([json.loads(line) for line in lines], lines)
    finally:
        sink.close()
    outputs = [*empty]
    for command in (("trace",), ("metrics",), ("cost",), ("metrics", "no-such-run"), ("viz", "no-such-run"),
                    ("replay", "no-such-run"), ("diff", "no-such-run", "other")):
        human, document = both(app, command[0], uri, *command[1:])
        assert human.exit_code in (0, 1, 2) and shown(postgres_uri) in human.output + document.output, command
        outputs += [human, document]
    assert leaked(result.output for result in outputs) == []


def test_the_servers_json_announcement_names_the_sessions_masked(postgres_uri):
    registry = "grapharc.examples.approval:register_credit_graph"
    with ServerProcess(grapharc_serve("--port", "0", "--json", "--sessions", planted(postgres_uri),
                                      "--registry", registry)) as server:
        announced = server.json_announcement()
    assert announced["sessions"] == shown(postgres_uri)
    assert leaked([json.dumps(announced), server.stdout, server.stderr]) == []
