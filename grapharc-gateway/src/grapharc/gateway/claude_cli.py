"""The ``claude-cli/`` backend: ``claude -p`` driven as a pure inference endpoint, completion only.

Claude Code is a full agent, so it is run with nothing an injected instruction could
use: no built-in tools (``--tools ""``), no MCP servers, no settings sources, safe
mode (no CLAUDE.md, hooks, skills or plugins), no slash commands, no saved session,
permission mode ``dontAsk``, and an empty temporary working directory. The system
prompt replaces Claude Code's own; the conversation goes in on stdin and the flags as
an argv array, never through a shell. Its JSON result gives the text, the usage
(cached input folded in) and the CLI's own ``total_cost_usd``.

There is no tool-calling wire on this path, so ``bind_tools`` and
``with_structured_output`` raise NotImplementedError rather than pretend. Calls
spend the Claude subscription's quota; the CLI decides prompt caching.

An agent on this backend is delegated (``delegates_tools``): ``run_delegated`` runs Claude
Code's own headless agent on the task in the workspace, with every tool it has under
``bypassPermissions`` — not governed by GraphARC's permission policy or executor, and said so
by a ``DelegatedToolUseWarning`` and ``executor=delegated`` on the trace. Still no MCP
servers and no settings sources; the workspace is its working directory and its only
stated scope, and the timeout holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any, ClassVar, NoReturn

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

from grapharc.gateway.envelope import cli_usage, metered_result, reported_cost
from grapharc.gateway.errors import ClaudeCLIError, SpendCeilingError
from grapharc.gateway.spend import SpendMeter
from grapharc.harness.agent import DelegatedRun

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
EMPTY_MCP_CONFIG = '{"mcpServers":{}}'
CHILD_ENVIRONMENT = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
WIRE_BACKENDS = "openrouter/, openai/, ollama/ or novita/"


def delegated_arguments(executable: str, model: str) -> list[str]:
    """The argv that runs Claude Code's own agent on a task (prompt on stdin) in a workspace."""
    return [
        executable, "-p",
        "--output-format", "json",
        f"--model={model}",
        "--strict-mcp-config", "--mcp-config", EMPTY_MCP_CONFIG,
        "--setting-sources", "",
        "--no-session-persistence",
        "--permission-mode", "bypassPermissions",
    ]


def cli_arguments(executable: str, model: str, system_prompt: str) -> list[str]:
    """The argv that runs one tool-free, settings-free completion (the prompt goes on stdin)."""
    return [
        executable, "-p",
        "--output-format", "json",
        f"--model={model}",
        "--tools", "",
        "--strict-mcp-config", "--mcp-config", EMPTY_MCP_CONFIG,
        "--setting-sources", "",
        "--safe-mode",
        "--disable-slash-commands",
        "--no-session-persistence",
        "--permission-mode", "dontAsk",
        f"--system-prompt={system_prompt}",
    ]


def render_prompt(messages: Sequence[BaseMessage]) -> tuple[str, str]:
    """``(system prompt, stdin text)``: one user turn is sent as-is, a longer one as a transcript.

    Content other than text (an image, a file) is refused rather than silently dropped.
    """
    system = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage)) or DEFAULT_SYSTEM_PROMPT
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else []
        kinds = {block.get("type") if isinstance(block, dict) else "text" for block in blocks} - {"text"}
        if kinds:
            raise NotImplementedError(f"claude-cli sends text only; a {message.type} message carries "
                                      f"{', '.join(sorted(map(str, kinds)))} content")
    turns = [m for m in messages if not isinstance(m, SystemMessage)]
    if not turns:
        raise ClaudeCLIError("claude-cli needs at least one non-system message to reply to")
    if len(turns) == 1 and isinstance(turns[0], HumanMessage):
        return system, turns[0].text
    labels = {"human": "User", "ai": "Assistant"}
    transcript = "\n\n".join(f"{labels.get(m.type, m.type.title())}: {m.text}" for m in turns)
    return system, ("The conversation so far, oldest first:\n\n" + transcript
                    + "\n\nReply as the assistant to the last user message.")


def parse_result(spec: str, stdout: str, stderr: str, returncode: int) -> dict[str, Any]:
    """The CLI's JSON result document; a ClaudeCLIError when it failed or printed none."""
    document = _json_document(stdout)
    if document is None:
        said = (stderr.strip() or stdout.strip() or "nothing").splitlines()[0][:300]
        raise ClaudeCLIError(f"{spec}: claude exited {returncode} without a JSON result: {said}",
                             hint="run `claude --version`; GraphARC needs a Claude Code with "
                                  "--safe-mode and --tools")
    if document.get("is_error") or document.get("subtype", "success") != "success":
        said = str(document.get("result") or document.get("subtype") or "an unnamed error")[:300]
        hint = "run `claude` once interactively to log in" if "login" in said.lower() else ""
        raise ClaudeCLIError(f"{spec}: claude reported an error: {said}", hint=hint)
    if not isinstance(document.get("result"), str):
        raise ClaudeCLIError(f"{spec}: claude's JSON result has no text 'result'")
    return document


def _json_document(stdout: str) -> dict[str, Any] | None:
    for candidate in (stdout, *reversed(stdout.strip().splitlines())):
        try:
            document = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(document, dict):
            return document
    return None


def _truncate(text: str, stop: list[str] | None) -> str:
    cut = min((index for word in stop or () if (index := text.find(word)) >= 0), default=len(text))
    return text[:cut]


def _kill(process: subprocess.Popen[str] | asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _run(argv: list[str], text: str, cwd: str, timeout: float, late: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of ``argv`` run in ``cwd`` in a session of its own, given ``text``
    on stdin. Past ``timeout`` s its process group is killed and ``ClaudeCLIError`` says it was
    ``late``; on any other interruption the group is killed and the interruption raised."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,  # noqa: S603 -- argv list, no shell; the claude CLI the operator configured
                               text=True, cwd=cwd, env={**os.environ, **CHILD_ENVIRONMENT},
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(text, timeout=timeout)
        return stdout, stderr, process.returncode
    except subprocess.TimeoutExpired:
        _kill(process)
        process.communicate()
        raise ClaudeCLIError(f"{late} within {timeout:g} s") from None
    except BaseException:
        _kill(process)
        raise


class ClaudeCLIChatModel(BaseChatModel):
    """A completion-only chat model that runs ``claude -p`` once per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)

    model_name: str = Field(alias="model")
    executable: str = "claude"
    timeout: float = 600.0
    spend_meter: SpendMeter | None = Field(default=None, exclude=True)
    delegates_tools: ClassVar[bool] = True

    @property
    def spec(self) -> str:
        """The ``claude-cli/model`` spec this model answers for."""
        return f"claude-cli/{self.model_name}"

    @property
    def _llm_type(self) -> str:
        return "grapharc-claude-cli"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> NoReturn:
        """Refused: ``claude -p`` is driven with every tool disabled, so there is no tool wire."""
        raise NotImplementedError(
            f"{self.spec} is completion-only: claude -p runs with every tool disabled and has no "
            f"tool-calling wire; use an OpenAI-wire backend ({WIRE_BACKENDS}) for tools")

    def with_structured_output(self, schema: dict[str, Any] | type, *, include_raw: bool = False,
                               **kwargs: Any) -> NoReturn:
        """Refused: structured output needs an OpenAI-wire backend."""
        raise NotImplementedError(
            f"{self.spec} is completion-only and offers no structured output; use an OpenAI-wire "
            f"backend ({WIRE_BACKENDS})")

    def _executable(self) -> str:
        path = shutil.which(self.executable)
        if path is None:
            raise ClaudeCLIError(f"{self.spec}: {self.executable} is not on PATH",
                                 hint="install Claude Code and run `claude` once to log in")
        return path

    def _command(self, messages: list[BaseMessage]) -> tuple[list[str], str]:
        system, prompt = render_prompt(messages)
        return cli_arguments(self._executable(), self.model_name, system), prompt

    def _result(self, document: dict[str, Any], stop: list[str] | None) -> ChatResult:
        usage = cli_usage(document.get("usage") or {})
        cost = reported_cost(document.get("total_cost_usd"))
        metadata = {"model_name": self.model_name, "cost_usd": cost,
                    "stop_reason": document.get("stop_reason"), "session_id": document.get("session_id")}
        message = AIMessage(content=_truncate(document["result"], stop), usage_metadata=usage,
                            response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)],
                          llm_output={"model_name": self.model_name, "cost_usd": cost})

    def _crossed(self, result: ChatResult) -> SpendCeilingError | None:
        if self.spend_meter is None:
            return None
        cost = result.llm_output["cost_usd"] if result.llm_output else None
        return self.spend_meter.record(self.spec, cost)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.spend_meter is not None:
            self.spend_meter.before_call(self.spec)
        argv, prompt = self._command(messages)
        with tempfile.TemporaryDirectory(prefix="grapharc-claude-") as cwd:
            stdout, stderr, code = _run(argv, prompt, cwd, self.timeout,
                                        f"{self.spec}: claude did not answer")
        result = self._result(parse_result(self.spec, stdout, stderr, code), stop)
        crossed = self._crossed(result)
        if crossed is not None:
            if run_manager is not None:  # usage meters still see the call that crossed the line
                run_manager.on_llm_end(metered_result(result))
            raise crossed
        return result

    def run_delegated(self, task: str, *, workspace: str | os.PathLike[str], timeout: float) -> DelegatedRun:
        """Run Claude Code's own agent on ``task`` in ``workspace`` (see the module docstring)."""
        if self.spend_meter is not None:
            self.spend_meter.before_call(self.spec)
        argv = delegated_arguments(self._executable(), self.model_name)
        stdout, stderr, code = _run(argv, task, os.fspath(workspace), min(timeout, self.timeout),
                                    f"{self.spec}: the delegated agent did not finish")
        document = parse_result(self.spec, stdout, stderr, code)
        usage = cli_usage(document.get("usage") or {})
        return DelegatedRun(str(document["result"]), tokens=usage["total_tokens"],
                            cost_usd=reported_cost(document.get("total_cost_usd")))

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        if self.spend_meter is not None:
            self.spend_meter.before_call(self.spec)
        argv, prompt = self._command(messages)
        with tempfile.TemporaryDirectory(prefix="grapharc-claude-") as cwd:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=cwd, env={**os.environ, **CHILD_ENVIRONMENT},
                start_new_session=True)
            try:
                async with asyncio.timeout(self.timeout):  # wait_for (3.11) can swallow a cancel
                    stdout, stderr = await process.communicate(prompt.encode())
            except BaseException as stopped:  # a timeout or a cancel: claude is killed and reaped
                _kill(process)
                await process.wait()
                if isinstance(stopped, TimeoutError):
                    raise ClaudeCLIError(f"{self.spec}: claude did not answer within {self.timeout:g} s") \
                        from None
                raise
        document = parse_result(self.spec, stdout.decode(errors="replace"),
                                stderr.decode(errors="replace"), process.returncode or 0)
        result = self._result(document, stop)
        crossed = self._crossed(result)
        if crossed is not None:
            if run_manager is not None:
                await run_manager.on_llm_end(metered_result(result))
            raise crossed
        return result
