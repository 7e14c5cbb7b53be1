"""The trace commands: --json documents, human views, and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

import pytest
import typer

from grapharc.cli.observe_commands import add_observe_commands
from grapharc.testing.cli import run_cli


@pytest.fixture(scope="module")
def app():
    app = typer.Typer()
    add_observe_commands(app)
    return app


@pytest.fixture
def invoke(app):
    """The trace commands through the real entry point, so a usage error follows --json too."""

    def call(*args):
        return run_cli(args, app=app)

    return call


@pytest.fixture
def trace(builder):
    b = builder
    b.run_start("r1", thread="t", tenant="acme")
    b.node("r1", "load", 1, thread="t", tokens=3, delta={"xs": [1]})
    b.node("r1", "load", 2, thread="t", tokens=4, delta={"xs": [2]}, cost_usd=0.25)
    b.add("model_call", "r1", thread="t", node=None, tokens=10)
    b.run_end("r1", thread="t")
    b.run_start("r2", thread="t", tenant="globex").node("r2", "load", 1, thread="t", tokens=3,
                                                        delta={"xs": [1]})
    b.start("r2", "load", 2, thread="t").error("r2", "load", 2, thread="t", message="nope")
    b.run_end("r2", thread="t", status="error", stop_reason="ValueError")
    return b.write()


COMMANDS = [("trace",), ("metrics", "{run}"), ("viz", "{run}"), ("replay", "{run}"),
            ("diff", "{run}", "{run}"), ("cost", "{run}")]


def args_for(command, run, path):
    return [command[0], path, *(part.format(run=run) for part in command[1:])]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_prints_one_json_document_and_exits_0(invoke, trace, command):
    result = invoke(*args_for(command, "r1", trace), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True
    assert result.stderr == ""


@pytest.mark.parametrize("command", COMMANDS[1:], ids=[c[0] for c in COMMANDS[1:]])
def test_an_unknown_run_exits_1_with_a_clear_message(invoke, trace, command):
    human = invoke(*args_for(command, "nope", trace))
    assert human.exit_code == 1 and human.stdout == ""
    assert human.stderr.startswith(f"error: {trace}: no events for run 'nope'")
    document = json.loads(invoke(*args_for(command, "nope", trace), "--json").stdout)
    assert document["ok"] is False and document["error"]["code"] == "UnknownRunError"


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_path_that_cannot_be_read_exits_2_with_one_line(invoke, tmp_path, command):
    binary = tmp_path / "blob"
    binary.write_bytes(b"\x00\x01\x02")
    malformed = tmp_path / "bad.jsonl"
    malformed.write_text('{"phase": "start"}\n{{{\n{"phase": "end"}\n')
    cases = [(tmp_path / "absent.jsonl", "does not exist"), (tmp_path, "is a directory"),
             (binary, "binary data")]
    if command[0] != "trace":  # trace streams: see the test of a malformed line below
        cases.append((malformed, "bad.jsonl:2: is not valid JSON"))
    for path, words in cases:
        result = invoke(*args_for(command, "r1", path))
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.startswith("error: ") and words in result.stderr.splitlines()[0]
        assert "Traceback" not in result.stderr
        document = json.loads(invoke(*args_for(command, "r1", path), "--json").stdout)
        assert document["ok"] is False and words in document["error"]["message"]
        assert invoke(*args_for(command, "r1", path), "--json").exit_code == 2


def test_trace_pretty_prints_and_filters(invoke, trace):
    result = invoke("trace", trace, "--run", "r2")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and len(lines) == 6
    assert "ValueError: nope" in lines[4] and "status=error" in lines[5]
    assert invoke("trace", trace, "--thread", "t", "--attempt", "7").exit_code == 1


def test_trace_json_is_one_document_holding_every_event(invoke, trace):
    document = json.loads(invoke("trace", trace, "--run", "r2", "--json").stdout)
    assert document["ok"] is True and document["count"] == 6 == len(document["events"])
    assert document["events"][0]["phase"] == "run_start" and document["events"][0]["run_id"] == "r2"
    streamed = invoke("trace", trace, "--run", "r2", "--jsonl").stdout.splitlines()
    assert [json.loads(line) for line in streamed] == document["events"]
    assert json.loads(invoke("trace", trace, "--run", "none", "--json").stdout)["ok"] is False


def test_trace_streams_events_up_to_a_malformed_line_then_fails_with_its_number(invoke, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"phase": "start", "node": "a"}\n{{{\n{"phase": "end"}\n')
    human = invoke("trace", path)
    assert human.exit_code == 2 and len(human.stdout.splitlines()) == 1
    assert human.stderr.startswith(f"error: {path}:2: is not valid JSON")
    lines = invoke("trace", path, "--jsonl").stdout.splitlines()
    assert json.loads(lines[0])["node"] == "a"
    assert len(lines) == 2 and json.loads(lines[1])["error"]["code"] == "TraceFormatError"
    document = invoke("trace", path, "--json")
    assert document.exit_code == 2
    assert json.loads(document.stdout)["error"]["code"] == "TraceFormatError"


def test_trace_takes_one_format(invoke, trace):
    result = invoke("trace", trace, "--json", "--jsonl")
    assert result.exit_code == 2 and "choose one" in json.loads(result.stdout)["error"]["message"]


def test_metrics_human_view_and_all_runs(invoke, trace):
    one = invoke("metrics", trace, "r1")
    assert one.exit_code == 0
    assert "tokens: 17 = 7 in nodes + 10 outside nodes" in one.stdout
    every = json.loads(invoke("metrics", trace, "--json").stdout)
    assert set(every["runs"]) == {"r1", "r2"} and every["total"]["tokens"]["total"] == 20


def test_metrics_and_cost_group_by_tenant(invoke, trace):
    metrics = json.loads(invoke("metrics", trace, "--by", "tenant", "--json").stdout)
    spent = json.loads(invoke("cost", trace, "--by", "tenant", "--json").stdout)
    assert {k: g["tokens"]["total"] for k, g in metrics["groups"].items()} == {"acme": 17, "globex": 3}
    assert {k: g["tokens"] for k, g in spent["groups"].items()} == {"acme": 17, "globex": 3}
    bad = invoke("cost", trace, "--by", "team")
    assert bad.exit_code == 2 and "cannot group by 'team'" in bad.stderr


def test_viz_prints_mermaid(invoke, trace):
    result = invoke("viz", trace, "r1")
    assert result.stdout.startswith("flowchart TD\n") and '["load ×2"]' in result.stdout


def test_replay_json_is_one_document_with_every_step(invoke, trace):
    document = json.loads(invoke("replay", trace, "r1", "--reducer", "xs=append", "--json").stdout)
    assert [step["index"] for step in document["steps"]] == [1, 2]
    assert document["state"] == {"xs": [1, 2]} and document["reducers"] == ["xs"]
    human = invoke("replay", trace, "r2")
    assert "ValueError: nope" in human.stdout and '"xs": [\n    1\n  ]' in human.stdout


def test_replay_text_starts_with_the_run_and_shows_a_newline_in_state_as_json_writes_it(invoke, builder):
    path = (builder.run_start("r", thread="t")
            .node("r", "write", 1, thread="t", delta={"report": "line one\nline two\x1b[31m\u202e"})
            .run_end("r", thread="t").write())
    lines = invoke("replay", path, "r").stdout.splitlines()
    assert lines[0].startswith("run r  ") and lines[1].startswith("status: completed")
    assert lines[3].startswith("#1     step 1    a1  write")
    assert lines[4:] == ["state:", "{", '  "report": "line one\\nline two\\u001b[31m\\u202e"', "}"]


def test_replay_with_no_steps_is_still_one_document(invoke, builder):
    path = builder.run_start("r").write()
    document = json.loads(invoke("replay", path, "r", "--json").stdout)
    assert document["steps"] == [] and document["steps_total"] == 0


def test_a_bad_reducer_exits_2(invoke, trace):
    result = invoke("replay", trace, "r1", "--reducer", "xs")
    assert result.exit_code == 2 and "is not FIELD=REDUCER" in result.stderr


def test_diff_exits_0_when_identical_and_1_when_runs_differ(invoke, trace):
    assert invoke("diff", trace, "r1", "r1").exit_code == 0
    different = invoke("diff", trace, "r1", "r2")
    assert different.exit_code == 1 and "differ in: state, tokens, outcome" in different.stdout
    document = json.loads(invoke("diff", trace, "r1", "r2", "--json").stdout)
    assert document["identical"] is False and document["ok"] is True


def test_cost_with_a_rate_card_shows_both_figures_side_by_side(invoke, trace, tmp_path):
    card = tmp_path / "rates.toml"
    card.write_text("[default]\nper_million = 1000000\n")
    document = json.loads(invoke("cost", trace, "r1", "--rate-card", card, "--json").stdout)
    assert document["total"]["estimated_cost_usd"] == pytest.approx(17.0)
    assert document["total"]["recorded_cost_usd"] == pytest.approx(0.25)
    assert document["threads"]["t"]["runs"] == 2
    assert "recorded USD" in invoke("cost", trace, "r1", "--rate-card", card).stdout
    card.write_text("[default]\nper_million = 'free'\n")
    bad = invoke("cost", trace, "r1", "--rate-card", card)
    assert bad.exit_code == 2 and str(card) in bad.stderr


def test_a_torn_line_left_by_a_crash_is_warned_about_on_stderr_and_in_json(invoke, trace):
    text = trace.read_text()
    trace.write_text(text + '{"phase": "sta\n' + text.splitlines()[0] + "\n")
    human = invoke("metrics", trace, "r1")
    assert human.exit_code == 0 and "skipped a line torn by a crashed writer" in human.stderr
    document = json.loads(invoke("metrics", trace, "r1", "--json").stdout)
    assert document["warnings"] == [f"{trace}:{len(text.splitlines()) + 1}: skipped a line torn by a "
                                    "crashed writer"]
