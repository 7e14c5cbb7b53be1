"""Traces in PostgreSQL: the same lines as a file, every trace command by URI with the same output,
events pruned with their thread, and a bad URI or unreachable server as one line."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import psycopg
import pytest

from grapharc.cli.main import build_app
from grapharc.errors import GraphARCError
from grapharc.examples.demo_choices import FanoutScenario
from grapharc.examples.stage3 import build_stage3, run_stage3
from grapharc.postgres.database import POOL_SIZE, borrowed
from grapharc.testing.cli import run_cli
from grapharc.trace.store import open_traces
from grapharc.trace.writer import TraceWriter


@pytest.fixture(scope="module")
def app():
    return build_app()


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The fan-out demo recorded twice (a crash and a hang isolated, then no fault) in one file."""
    trace = tmp_path_factory.mktemp("demo") / "stage3.jsonl"
    run_stage3(trace=trace, scenario=FanoutScenario.ISOLATION, worker_timeout=0.3)
    run_stage3(trace=trace, scenario=FanoutScenario.OVERLAP, worker_timeout=0.3)
    events = [json.loads(line) for line in trace.read_bytes().splitlines()]
    return trace, [e["run_id"] for e in events if e["phase"] == "run_start"]


def copy_into(uri: str, trace: Path) -> None:
    """Store a recorded trace's lines in the database, as a writer there would have."""
    lines = trace.read_bytes().splitlines(keepends=True)
    sink = open_traces(uri).open_sink()
    try:
        sink.write([json.loads(line) for line in lines], lines)
    finally:
        sink.close()


def stored_lines(uri: str) -> bytes:
    with psycopg.connect(uri) as conn:
        return b"".join(row[0].encode() + b"\n" for row in
                        conn.execute("SELECT line FROM grapharc_trace_events ORDER BY seq"))


def test_a_sinks_asynchronous_commit_stays_with_its_own_writes_not_the_pooled_connections(postgres_uri):
    event = {"phase": "note", "run_id": "r", "thread_id": "t"}
    with borrowed(postgres_uri) as database:  # the pool the sink writes on, and the session store too
        sink = open_traces(postgres_uri).open_sink()
        try:
            for _ in range(POOL_SIZE):  # psycopg_pool hands its connections out in turn: each writes once
                sink.write([event], [json.dumps(event).encode() + b"\n"])
        finally:
            sink.close()
        pooled = [database.pool.getconn() for _ in range(POOL_SIZE)]
        try:
            settings = {conn.execute("SHOW synchronous_commit").fetchone()["synchronous_commit"]
                        for conn in pooled}
        finally:
            for conn in pooled:
                database.pool.putconn(conn)
    assert settings == {"on"}  # the audit trail's writes still wait for the disk
    assert len(stored_lines(postgres_uri).splitlines()) == POOL_SIZE


def test_file_and_postgres_writers_store_the_same_bytes_for_each_event(postgres_uri, tmp_path):
    path = tmp_path / "t.jsonl"
    events = [
        {"phase": "run_start", "run_id": "r1", "thread_id": "t1", "ts": 1.5, "graph": "g"},
        {"phase": "note", "run_id": "r1", "thread_id": "t1", "ts": 2.0, "text": "é ✓ " + "x" * 2100,
         "id": UUID(int=7), "pair": (1, 2), "nan": float("nan"), 3: None, "ctl": "a\nb\x00"},
    ]
    for target in (path, postgres_uri):
        with TraceWriter(target) as writer:
            writer.append(dict(events[0]))
            writer.append_many([dict(e) for e in events[1:]] * 3)
    assert stored_lines(postgres_uri) == path.read_bytes()
    with psycopg.connect(postgres_uri) as conn:
        assert conn.execute("SELECT DISTINCT run_id, thread_id FROM grapharc_trace_events").fetchall() == [
            ("r1", "t1")]


def test_a_graph_compiled_with_a_postgres_trace_writes_its_run_there_and_file_uris_are_files(
        postgres_uri, tmp_path, app):
    from grapharc.examples.demo_support import demo_model
    from grapharc.examples.stage3 import ANSWERS, SHARDS

    def run(trace: str) -> str:
        readers = [demo_model(None, (f"Relevant: {', '.join(chunks)}",), name=f"r{i}")
                   for i, chunks in enumerate(SHARDS)]
        writer = demo_model(None, (ANSWERS[FanoutScenario.OVERLAP],), name="w")
        graph = build_stage3(readers, writer, trace=trace)  # type: ignore[arg-type]
        try:
            graph.invoke({"question": "q"}, {"configurable": {"thread_id": "th"}})
        finally:
            graph.close()
        assert graph.last_run is not None
        return str(graph.last_run.run_id)

    run_id = run(postgres_uri)
    listed = run_cli(["metrics", postgres_uri, "--json"], app=app)
    assert listed.exit_code == 0, listed.stderr
    assert list(json.loads(listed.stdout)["runs"]) == [run_id]

    file_run = run(f"file:{tmp_path / 'f.jsonl'}")
    assert json.loads((tmp_path / "f.jsonl").read_bytes().splitlines()[0])["run_id"] == file_run


COMMANDS = [("trace",), ("trace", "--run", "{a}"), ("metrics",), ("metrics", "{a}"), ("viz", "{a}"),
            ("replay", "{b}"), ("diff", "{a}", "{b}"), ("cost",), ("cost", "{b}"),
            ("metrics", "--by", "tenant")]


@pytest.mark.parametrize("as_json", [False, True])
def test_every_trace_command_says_the_same_of_a_file_and_of_its_copy_in_postgres(
        postgres_uri, demo_trace, app, as_json):
    trace, (run_a, run_b) = demo_trace
    copy_into(postgres_uri, trace)
    for command in COMMANDS:
        args = [word.format(a=run_a, b=run_b) for word in command] + (["--json"] if as_json else [])
        from_file = run_cli([args[0], str(trace), *args[1:]], app=app)
        from_db = run_cli([args[0], postgres_uri, *args[1:]], app=app)
        assert from_file.exit_code in (0, 1), (command, from_file.stderr)
        assert (from_db.exit_code, from_db.stderr) == (from_file.exit_code, from_file.stderr), command
        shown = from_db.stdout.replace(postgres_uri, "TRACE")
        assert shown == from_file.stdout.replace(str(trace), "TRACE"), command
        assert len(from_file.stdout) > 40, command


def test_prune_removes_the_trace_events_of_the_threads_it_removes(postgres_uri, manager):
    assert manager.start("chain", thread_id="done").status == "completed"
    assert manager.start("interview", thread_id="held").status == "paused"
    with TraceWriter(postgres_uri) as writer:
        for thread in ("done", "held"):
            writer.emit({"phase": "run_start", "run_id": f"run-{thread}", "thread_id": thread})

    assert manager.prune(0).removed == ("done",)

    with psycopg.connect(postgres_uri) as conn:
        left = conn.execute("SELECT thread_id FROM grapharc_trace_events").fetchall()
    assert left == [("held",)]


BAD = [("postgresql://127.0.0.1:1/nowhere", "cannot open the PostgreSQL store"),
       ("postgres:", "needs a server and a database"),
       ("nosuch://host/db", "nosuch")]


@pytest.mark.parametrize(("uri", "words"), BAD)
@pytest.mark.parametrize("command", [("trace",), ("metrics",), ("viz", "r"), ("replay", "r"),
                                     ("diff", "r", "s"), ("cost",)])
def test_a_bad_uri_or_unreachable_database_is_one_line_exit_2(app, uri, words, command):
    human = run_cli([command[0], uri, *command[1:]], app=app)
    assert human.exit_code == 2 and human.stdout == "", human.stdout
    assert human.stderr.startswith("error: ") and words in human.stderr
    assert "Traceback" not in human.stderr and len(human.stderr.strip().splitlines()) <= 2
    document = json.loads(run_cli([command[0], uri, *command[1:], "--json"], app=app).stdout)
    assert document["ok"] is False and words in document["error"]["message"]


def test_a_graph_given_an_unreachable_trace_database_fails_clearly_before_running():
    with pytest.raises(GraphARCError, match="cannot open the PostgreSQL store"):
        TraceWriter("postgresql://127.0.0.1:1/nowhere")


def test_grapharc_run_appends_its_trace_to_the_postgres_store_its_trace_flag_names(
        postgres_uri, tmp_path, app, monkeypatch):
    monkeypatch.chdir(tmp_path)
    graph = {"nodes": [{"name": "gather", "kind": "collect_context"},
                       {"name": "sum", "kind": "summarize"}],
             "edges": [{"source": "__start__", "target": "gather"},
                       {"source": "gather", "target": "sum"}],
             "input": {"goal": "checkout outage"}}
    (tmp_path / "graph.json").write_text(json.dumps(graph))

    ran = run_cli(["run", "graph.json", "--max-iterations", "5", "--trace", postgres_uri, "--json"],
                  app=app)

    assert ran.exit_code == 0, ran.stdout + ran.stderr
    phases = [json.loads(line)["phase"] for line in stored_lines(postgres_uri).splitlines()]
    assert phases[0] == "admission" and "run_start" in phases and phases[-1] == "run_end"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json"]
