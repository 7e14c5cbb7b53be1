"""``grapharc agent``: exit codes, the --json document read from the trace, durable asks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.plugins import ToolInfo, hookimpl
from grapharc.testing import in_process_source, plugin_host


class NoteTools:
    """The harness tests' note tools, registered the way grapharc-tools registers its seven."""

    @staticmethod
    @hookimpl
    def register_tools(register: Any) -> None:
        for name, factory in (("append_note", "APPEND"), ("read_note", "READ"), ("big_output", "BIG")):
            register(ToolInfo(name=name, factory=f"test_agent_command:{factory.lower()}_tool"))


def append_tool() -> Any:
    from agent_tools import APPEND

    return APPEND


def read_tool() -> Any:
    from agent_tools import READ

    return READ


def big_tool() -> Any:
    from agent_tools import BIG

    return BIG


@pytest.fixture(autouse=True)
def note_tools(clean_workdir: Path):
    (clean_workdir / "ws").mkdir()
    with plugin_host(in_process_source(NoteTools, name="note-tools"), installed=False):
        yield clean_workdir


def script(tmp: Path, *replies: Any) -> str:
    path = tmp / "script.json"
    path.write_text(json.dumps(list(replies)))
    return str(path)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "args": args}]}


def agent(*args: str) -> Any:
    return CliRunner().invoke(build_app(), ["agent", *args], catch_exceptions=False)


def test_the_agent_answers_with_exit_0_and_one_document_of_every_call_and_its_decision(note_tools):
    replies = script(note_tools, call("append_note", name="todo", text="milk"),
                     call("read_note", name="todo"), "noted milk")
    result = agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--allow", "*", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["ok"], document["answer"], document["stop_reason"]) == (True, "noted milk", "answered")
    assert document["steps"] == 3
    assert [(c["tool"], c["decision"], c["outcome"]) for c in document["tool_calls"]] == [
        ("append_note", "allow", "ok"), ("read_note", "allow", "ok")]
    assert document["spend"]["tokens"] > 0 and document["spend"]["runs"] == 1
    assert (note_tools / "ws" / "todo.txt").read_text() == "milk\n"


def test_text_output_is_the_answer_and_stop_reason_with_tool_calls_on_stderr(note_tools):
    replies = script(note_tools, call("read_note", name="todo"), "nothing noted")
    result = agent("read notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies)
    assert result.exit_code == 0
    assert "answer    : nothing noted" in result.stdout
    assert "stopped   : answered after 2 step(s)" in result.stdout
    assert 'tool read_note {"name": "todo"} -> ok' in result.stderr
    assert "tool read_note" not in result.stdout


def test_a_denied_call_is_refused_and_recorded_and_stopping_short_exits_1(note_tools):
    replies = script(note_tools, *[call("append_note", name="x", text="y")] * 4)
    result = agent("write", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--allow", "*", "--deny", "append_note", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert (document["ok"], document["stop_reason"]) == (False, "no_progress")
    assert {(c["decision"], c["outcome"]) for c in document["tool_calls"]} == {("deny", None)}
    assert not (note_tools / "ws" / "x.txt").exists()


def test_an_ask_outside_a_session_is_refused_with_its_reason(note_tools):
    replies = script(note_tools, call("append_note", name="x", text="y"), "could not write")
    result = agent("write", "--workspace", "ws", "--model", "mock/agent", "--script", replies, "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 0 and document["answer"] == "could not write"
    [asked] = document["tool_calls"]
    assert (asked["tool"], asked["decision"], asked["outcome"]) == ("append_note", "ask", None)
    assert "run it in a session" in asked["reason"]
    assert not (note_tools / "ws" / "x.txt").exists()
    text = agent("write", "--workspace", "ws", "--model", "mock/agent", "--script", replies)
    assert "hint: 1 call(s) needed an approval nobody could give; run with --sessions DIR" in text.stderr


def test_with_no_policy_and_no_rule_flags_the_defaults_are_named_as_defaults_not_flags(note_tools):
    replies = script(note_tools, call("read_note", name="todo"), call("append_note", name="x", text="y"),
                     "done")
    result = agent("notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies, "--json")
    calls = [(c["tool"], c["decision"], c["rule_id"]) for c in json.loads(result.stdout)["tool_calls"]]
    assert calls == [("read_note", "allow", "default-allow:read_note"),
                     ("append_note", "ask", "default-ask:append_note")]
    flagged = agent("notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                    "--allow", "*", "--json")
    assert {c["rule_id"] for c in json.loads(flagged.stdout)["tool_calls"]} == {"flag-allow:*"}


def test_a_backend_that_cannot_call_tools_is_refused_naming_one_that_can(note_tools):
    from grapharc.plugins import BackendInfo

    class TextOnly:
        @staticmethod
        @hookimpl
        def register_model_backends(register: Any) -> None:
            register(BackendInfo(prefix="texty", vendor="t", capabilities=frozenset({"completion"}),
                                 factory="grapharc.models.scripted:create_scripted_model"))

    with plugin_host(in_process_source(NoteTools, name="note-tools"),
                     in_process_source(TextOnly, name="texty"), installed=False):
        result = agent("x", "--workspace", "ws", "--model", "texty/m", "--json")
    assert result.exit_code == 2
    message = json.loads(result.stdout)["error"]["message"]
    assert "texty/ cannot call tools" in message and "mock/" in message


@pytest.mark.parametrize(("args", "words"), [
    (["--workspace", "missing"], "the workspace must be a folder that does"),
    (["--workspace", "ws", "--executor", "nope"], "no executor named 'nope'"),
    (["--workspace", "ws", "--trace", "ws/trace.jsonl"], "inside the workspace"),
    (["--workspace", "ws", "--sessions", "ws/s"], "inside the workspace"),
])
def test_what_cannot_run_exits_2_with_one_line(note_tools, args, words):
    result = agent("x", "--model", "mock/agent", *args)
    assert result.exit_code == 2
    assert words in result.stderr and "Traceback" not in result.stderr


def test_a_model_spec_naming_no_backend_is_refused_before_a_session_store_is_created(note_tools):
    """Found by the CLI fuzz suite: the sessions folder was created, then the spec refused."""
    result = agent("x", "--model", "goal", "--workspace", "ws", "--sessions", "new-folder")

    assert result.exit_code == 2 and "names no backend" in result.stderr
    assert not (note_tools / "new-folder").exists()


def test_an_empty_script_is_refused_with_a_hint_for_the_command_line_not_the_python_api(note_tools):
    (note_tools / "empty.json").write_text("[]")
    result = agent("x", "--workspace", "ws", "--model", "mock/a", "--script", "empty.json")
    assert result.exit_code == 2 and "script empty.json holds no replies" in result.stderr
    assert "cycle=True" not in result.stderr


def test_a_script_that_runs_out_is_the_runs_negative_answer_exit_1(note_tools):
    replies = script(note_tools, call("read_note", name="todo"))
    result = agent("x", "--workspace", "ws", "--model", "mock/a", "--script", replies, "--json")
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "ScriptExhaustedError" and "--script" in error["hint"]
    assert "cycle=True" not in error["hint"]


def test_a_script_for_a_real_backend_or_a_bad_script_is_refused(note_tools):
    (note_tools / "bad.json").write_text('[{"tool_calls": "nope"}]')
    result = agent("x", "--workspace", "ws", "--model", "mock/a", "--script", "bad.json")
    assert result.exit_code == 2 and "script entry 0" in result.stderr
    result = agent("x", "--workspace", "ws", "--model", "openai/gpt", "--script", "bad.json")
    assert result.exit_code == 2 and "--script scripts the mock/ backend" in result.stderr


def test_in_a_session_an_ask_pauses_and_an_approval_from_a_new_manager_finishes_it(note_tools):
    replies = script(note_tools, call("read_note", name="todo"),
                     call("append_note", name="todo", text="milk"), "wrote milk")
    result = agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--sessions", "sessions", "--thread", "t1", "--json")
    assert result.exit_code == 1, result.output
    paused = json.loads(result.stdout)
    assert (paused["status"], paused["ok"], paused["thread"]) == ("paused", False, "t1")
    [approval] = paused["approvals"]
    assert "append_note" in approval["question"]
    assert not (note_tools / "ws" / "todo.txt").exists()

    text = agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                 "--sessions", "sessions", "--thread", "t2")
    assert f"grapharc session approve t2 --sessions {note_tools / 'sessions'}" in text.stdout

    decided = CliRunner().invoke(build_app(), ["session", "approve", "t1", "--dir", "sessions", "--json"])
    assert decided.exit_code == 0, decided.output
    done = json.loads(decided.stdout)
    assert (done["status"], done["answer"], done["ok"]) == ("completed", "wrote milk", True)
    assert (note_tools / "ws" / "todo.txt").read_text() == "milk\n"
    assert [(c["decision"], c["approval"], c["outcome"]) for c in done["tool_calls"]
            if c["tool"] == "append_note"][-1] == ("ask", "approved", "ok")


def test_a_rejected_ask_is_refused_to_the_model_and_the_write_never_happens(note_tools):
    replies = script(note_tools, call("append_note", name="todo", text="milk"), "could not write")
    agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
          "--sessions", "sessions", "--thread", "t1")
    decided = CliRunner().invoke(build_app(), ["session", "reject", "t1", "--dir", "sessions", "--json"])
    done = json.loads(decided.stdout)
    assert done["answer"] == "could not write"
    assert not (note_tools / "ws" / "todo.txt").exists()


def test_a_policy_document_deny_beats_an_allow_flag_and_its_rule_is_named(note_tools):
    (note_tools / "policy.toml").write_text(
        'version = "p1"\n[[rules]]\nid = "no-notes"\nresource = "tool"\ntool = "append_note"\n'
        'action = "deny"\nreason = "notes are read-only here"\n')
    replies = script(note_tools, call("append_note", name="x", text="y"), "could not")
    result = agent("write", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--policy", "policy.toml", "--allow", "*", "--json")
    [denied] = json.loads(result.stdout)["tool_calls"]
    assert (denied["decision"], denied["rule_id"], denied["reason"]) == ("deny", "no-notes",
                                                                         "notes are read-only here")
    assert not (note_tools / "ws" / "x.txt").exists()


@pytest.mark.parametrize(("limit", "reason"), [(["--max-tokens", "60"], "budget"),
                                               (["--max-steps", "2"], "max_steps")])
def test_a_budget_or_step_limit_stops_the_agent_short_with_exit_1(note_tools, limit, reason):
    replies = script(note_tools, *[call("read_note", name=f"n{i}") for i in range(8)], "never")
    result = agent("read", "--workspace", "ws", "--model", "mock/agent", "--script", replies, *limit,
                   "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["stop_reason"] == reason


def test_model_output_cannot_fake_terminal_lines(note_tools):
    replies = script(note_tools, {"content": "", "tool_calls": [{"name": "read_note", "args": {"name": "a"},
                                                                 "id": "x\x1b[2J\rfake"}]},
                     "\x1b[2Jdone\nstopped   : fake")
    result = agent("x", "--workspace", "ws", "--model", "mock/agent", "--script", replies)
    assert "\x1b" not in result.stdout + result.stderr and "\r" not in result.stdout
    assert "answer    : \\x1b[2Jdone\\nstopped   : fake" in result.stdout


def test_executor_options_reach_the_executor_factory_and_a_bad_one_is_refused(note_tools):
    result = agent("x", "--workspace", "ws", "--model", "mock/a", "--executor-option", "retries=3")
    assert result.exit_code == 2 and "the local executor takes no options, got ['retries']" in result.stderr
    result = agent("x", "--workspace", "ws", "--model", "mock/a", "--executor-option", "oops")
    assert result.exit_code == 2 and "is not KEY=VALUE" in result.stderr


# -- settings resolve as every command's do: flag > env > grapharc.toml -------------------------

DENY_NOTES = ('version = "p1"\n[[rules]]\nid = "no-notes"\nresource = "tool"\ntool = "append_note"\n'
              'action = "deny"\nreason = "notes are read-only here"\n')


def test_a_policy_named_in_grapharc_toml_governs_the_agent_and_its_source_is_named(note_tools):
    (note_tools / "policy.toml").write_text(DENY_NOTES)
    (note_tools / "grapharc.toml").write_text('[grapharc]\npolicy = "policy.toml"\nmodel = "mock/agent"\n')
    replies = script(note_tools, call("append_note", name="x", text="y"), "could not")
    result = agent("write", "--workspace", "ws", "--script", replies, "--allow", "*", "--json")
    document = json.loads(result.stdout)
    [denied] = document["tool_calls"]
    assert (denied["decision"], denied["rule_id"]) == ("deny", "no-notes")
    assert document["policy_source"] == "config"
    assert document["policy"]["origin"] == str((note_tools / "policy.toml").resolve())
    assert document["sources"] == {"model": "file", "policy": "file", "max_depth": "default",
                                   "max_rounds": "default"}
    assert not (note_tools / "ws" / "x.txt").exists()


def test_a_flag_beats_the_environment_which_beats_the_file(note_tools, monkeypatch):
    (note_tools / "grapharc.toml").write_text('[grapharc]\nmodel = "nobackend/x"\nmax_tokens = 5\n')
    monkeypatch.setenv("GRAPHARC_MODEL", "mock/agent")
    replies = script(note_tools, "done")
    result = agent("look", "--workspace", "ws", "--script", replies, "--max-tokens", "100000", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["sources"]["model"], document["sources"]["max_tokens"]) == ("env", "flag")
    assert document["policy_source"] == "built-in" and document["policy"] is None


def test_sessions_named_by_the_environment_make_the_agent_a_durable_session(note_tools, monkeypatch):
    monkeypatch.setenv("GRAPHARC_SESSIONS", str(note_tools / "kept"))
    replies = script(note_tools, call("append_note", name="todo", text="milk"), "done")
    result = agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--thread", "t1", "--json")
    document = json.loads(result.stdout)
    assert (result.exit_code, document["status"], document["sessions"]) == (1, "paused",
                                                                            str(note_tools / "kept"))
    assert (note_tools / "kept" / "traces" / "t1.jsonl").is_file()
    assert document["sources"]["sessions"] == "env"


def test_no_model_from_any_layer_is_refused_naming_every_layer(note_tools):
    result = agent("look", "--workspace", "ws", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "AgentInputError" and "GRAPHARC_MODEL" in error["hint"]


@pytest.mark.parametrize("where", ["env", "file"])
def test_a_session_store_uri_without_a_trace_is_refused_before_anything_runs(note_tools, monkeypatch, where):
    uri = "sqlite:" + str(note_tools / "store")
    if where == "env":
        monkeypatch.setenv("GRAPHARC_SESSIONS", uri)
    else:
        (note_tools / "grapharc.toml").write_text(f'[grapharc]\nsessions = "{uri}"\n')
    result = agent("look", "--workspace", "ws", "--model", "mock/agent", "--json")
    assert result.exit_code == 2
    assert "needs a trace" in json.loads(result.stdout)["error"]["message"]
    assert not Path(note_tools / "store").exists()


def test_an_agent_session_in_a_store_uri_with_a_trace_uri_is_carried_on_by_another_process(note_tools):
    store, trace = f"sqlite:{note_tools / 'store'}", f"file:{note_tools / 'agent.jsonl'}"
    (note_tools / "grapharc.toml").write_text(f'[grapharc]\nsessions = "{store}"\ntrace = "{trace}"\n')
    replies = script(note_tools, call("append_note", name="todo", text="milk"), "wrote milk")
    paused = agent("keep notes", "--workspace", "ws", "--model", "mock/agent", "--script", replies,
                   "--thread", "t1", "--json")
    assert json.loads(paused.stdout)["status"] == "paused", paused.output
    decided = CliRunner().invoke(build_app(), ["session", "approve", "t1", "--json"])
    assert decided.exit_code == 0, decided.output
    assert json.loads(decided.stdout)["answer"] == "wrote milk"
    assert (note_tools / "agent.jsonl").is_file() and not (note_tools / "file:").exists()
