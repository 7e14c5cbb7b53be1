"""The claude-cli backend against a fake ``claude`` on PATH: how it is run, and what it returns."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from grapharc.gateway import ClaudeCLIChatModel, ClaudeCLIError, SpendCeilingError, SpendMeter, get_model
from grapharc.gateway.claude_cli import DEFAULT_SYSTEM_PROMPT, EMPTY_MCP_CONFIG


def expected_argv(executable: Path, model: str, system: str) -> list[str]:
    return [str(executable), "-p", "--output-format", "json", f"--model={model}", "--tools", "",
            "--strict-mcp-config", "--mcp-config", EMPTY_MCP_CONFIG, "--setting-sources", "",
            "--safe-mode", "--disable-slash-commands", "--no-session-persistence",
            "--permission-mode", "dontAsk", f"--system-prompt={system}"]


def test_claude_cli_specs_build_the_completion_only_model(fake_claude):
    model = get_model("claude-cli/claude-sonnet-5")
    assert isinstance(model, ClaudeCLIChatModel) and model.spec == "claude-cli/claude-sonnet-5"


def test_claude_runs_as_an_argv_array_with_every_tool_and_setting_source_off(fake_claude):
    reply = get_model("claude-cli/claude-sonnet-5").invoke([SystemMessage("Answer tersely."),
                                                           HumanMessage("What is 2+2?")])
    assert reply.content == "fake claude says hi"
    (run,) = fake_claude.runs()
    assert run["argv"] == expected_argv(fake_claude.executable, "claude-sonnet-5", "Answer tersely.")
    assert run["stdin"] == "What is 2+2?"


def test_the_prompt_goes_on_stdin_verbatim_never_through_a_shell(fake_claude):
    hostile = "ignore that; $(rm -rf ~) `touch pwned` && echo 'run this command' | sh"
    get_model("claude-cli/sonnet").invoke(hostile)
    (run,) = fake_claude.runs()
    assert run["stdin"] == hostile
    assert all(hostile not in argument for argument in run["argv"])
    assert not Path(run["cwd"], "pwned").exists()


def test_claude_runs_in_an_empty_temporary_directory_so_no_claude_md_is_near(fake_claude, clean_environment):
    (clean_environment / "CLAUDE.md").write_text("Always answer in French.")
    get_model("claude-cli/sonnet").invoke("hi")
    (run,) = fake_claude.runs()
    assert run["cwd_entries"] == [] and Path(run["cwd"]) != clean_environment
    assert not Path(run["cwd"]).exists()
    assert run["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"


def test_without_a_system_message_claudes_own_agent_prompt_is_still_replaced(fake_claude):
    get_model("claude-cli/sonnet").invoke("hi")
    assert fake_claude.runs()[0]["argv"][-1] == f"--system-prompt={DEFAULT_SYSTEM_PROMPT}"


def test_a_system_prompt_that_looks_like_a_flag_stays_one_argument(fake_claude):
    flag_like = SystemMessage("--dangerously-skip-permissions")
    get_model("claude-cli/sonnet").invoke([flag_like, HumanMessage("hi")])
    argv = fake_claude.runs()[0]["argv"]
    assert "--dangerously-skip-permissions" not in argv
    assert argv[-1] == "--system-prompt=--dangerously-skip-permissions"


def test_a_conversation_is_sent_as_a_labelled_transcript(fake_claude):
    get_model("claude-cli/sonnet").invoke([HumanMessage("Name a colour."), AIMessage("Blue."),
                                           HumanMessage("Another?")])
    stdin = fake_claude.runs()[0]["stdin"]
    assert "User: Name a colour.\n\nAssistant: Blue.\n\nUser: Another?" in stdin
    assert stdin.endswith("Reply as the assistant to the last user message.")


def test_content_other_than_text_is_refused_rather_than_dropped(fake_claude):
    picture = HumanMessage(content=[{"type": "text", "text": "what is this?"},
                                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}])
    with pytest.raises(NotImplementedError, match=r"text only.*image_url"):
        get_model("claude-cli/sonnet").invoke([picture])
    assert fake_claude.runs() == []


def test_usage_folds_cached_input_into_the_total_and_cost_is_the_clis_own(fake_claude):
    reply = get_model("claude-cli/sonnet").invoke("hi")
    assert reply.usage_metadata == {"input_tokens": 1003, "output_tokens": 7, "total_tokens": 1010,
                                    "input_token_details": {"cache_read": 900, "cache_creation": 100}}
    assert reply.response_metadata["cost_usd"] == 0.0042


def test_a_result_without_a_cost_is_unpriced_not_guessed(fake_claude):
    fake_claude.reply(result={"total_cost_usd": None})
    meter = SpendMeter(1.0)
    reply = get_model("claude-cli/sonnet", spend_meter=meter).invoke("hi")
    assert reply.response_metadata["cost_usd"] is None and meter.unpriced_calls == 1


def test_bind_tools_raises_a_clear_not_implemented_error(fake_claude):
    with pytest.raises(NotImplementedError, match=r"completion-only.*openrouter/"):
        get_model("claude-cli/sonnet").bind_tools([])


def test_structured_output_raises_a_clear_not_implemented_error(fake_claude):
    class Verdict(BaseModel):
        supported: bool

    with pytest.raises(NotImplementedError, match=r"no structured output.*openai/"):
        get_model("claude-cli/sonnet").with_structured_output(Verdict)


def test_an_error_result_is_raised_with_claudes_message(fake_claude):
    fake_claude.reply(result={"is_error": True, "result": "Not logged in · Please run /login"}, exit=1)
    with pytest.raises(ClaudeCLIError, match="Not logged in") as raised:
        get_model("claude-cli/sonnet").invoke("hi")
    assert "log in" in raised.value.hint


def test_output_that_is_not_a_json_result_is_an_error_naming_the_spec(fake_claude):
    fake_claude.reply(stdout="", stderr="error: unknown option '--safe-mode'\n", exit=1)
    with pytest.raises(ClaudeCLIError, match=r"claude-cli/sonnet: claude exited 1 .*unknown option"):
        get_model("claude-cli/sonnet").invoke("hi")


def test_a_missing_executable_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ClaudeCLIError, match="claude is not on PATH"):
        get_model("claude-cli/sonnet").invoke("hi")


@pytest.fixture
def spawned(fake_claude, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pid of every fake claude started, whether or not it got as far as its log: a busy
    machine may take longer than a short timeout to start the interpreter, and the call then
    kills a claude that never wrote its line (asyncio starts processes through Popen too)."""
    pids: list[int] = []

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            super().__init__(args, *rest, **kwargs)
            if str(args[0]) == str(fake_claude.executable):
                pids.append(self.pid)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    return pids


def test_a_claude_that_does_not_answer_in_time_is_killed(fake_claude, spawned):
    fake_claude.reply(sleep=60)
    with pytest.raises(ClaudeCLIError, match=r"did not answer within 2 s"):
        get_model("claude-cli/sonnet", timeout=2).invoke("hi")
    (pid,) = spawned
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_async_call_that_times_out_or_is_cancelled_kills_claude(fake_claude, spawned):
    fake_claude.reply(sleep=60)
    with pytest.raises(ClaudeCLIError, match=r"did not answer within 1 s"):
        asyncio.run(get_model("claude-cli/sonnet", timeout=1).ainvoke("hi"))
    assert len(spawned) == 1
    logged = len(fake_claude.runs())  # 0 where the timeout came before the claude started

    async def cancelled_while_claude_works() -> None:
        call = asyncio.ensure_future(get_model("claude-cli/sonnet", timeout=60).ainvoke("hi"))
        while len(fake_claude.runs()) == logged:  # until this call's claude is running
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(cancelled_while_claude_works())
    assert len(spawned) == 2
    for pid in spawned:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_stop_sequences_cut_the_reply(fake_claude):
    assert get_model("claude-cli/sonnet").invoke("hi", stop=[" says"]).content == "fake claude"


def test_async_calls_run_the_same_command(fake_claude):
    reply = asyncio.run(get_model("claude-cli/sonnet").ainvoke("hi from async"))
    assert reply.content == "fake claude says hi"
    (run,) = fake_claude.runs()
    assert run["stdin"] == "hi from async" and run["argv"][1] == "-p"


def test_the_spend_meter_guards_claude_calls_on_both_sides(fake_claude):
    meter = SpendMeter(0.005)
    model = get_model("claude-cli/sonnet", spend_meter=meter)
    model.invoke("one")
    with pytest.raises(SpendCeilingError, match="crossed"):
        model.invoke("two")
    with pytest.raises(SpendCeilingError, match="before the call"):
        model.invoke("three")
    assert len(fake_claude.runs()) == 2


def test_an_agent_on_claude_cli_is_delegated_in_its_workspace_and_its_spend_lands_on_the_node(
        fake_claude, tmp_path):
    import warnings

    from grapharc.harness import AgentNode, DelegatedToolUseWarning, ToolRegistry

    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = get_model("claude-cli/claude-sonnet-5")
    with pytest.warns(DelegatedToolUseWarning):
        agent = AgentNode(model, ToolRegistry(), workspace=workspace)
    graph = agent.graph()
    graph.trace = tmp_path / "t.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = graph.compile().invoke({"task": "fix the failing test"})
    assert out["answer"] == "fake claude says hi"
    run = fake_claude.runs()[-1]
    assert run["cwd"] == str(workspace) and run["stdin"] == "fix the failing test"
    assert "bypassPermissions" in run["argv"] and "--tools" not in run["argv"]
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    end = next(e for e in events if e["phase"] == "end")
    assert (end["tokens"], end["cost_usd"]) == (1010, 0.0042)
    assert {e["executor"] for e in events if e["phase"] == "model"} == {"delegated"}
