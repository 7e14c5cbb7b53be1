"""``grapharc agent "TASK"``: the governed tool loop on a workspace, once or as a durable session.

The agent is built by ``grapharc.harness.setup.build_agent`` from its settings (the model,
policy, sessions, trace, tenant and budget resolve flag > env > grapharc.toml, as every
command's do, and the JSON document says where each came from): the installed tools, the
permission rules (a policy document's tool rules decide over the ``--allow/--ask/--deny``
globs; with neither, reads are allowed and everything else asked), the executor and the
limits. Tool calls are summarised on stderr as they happen; stdout holds
the answer and the stop reason (or one JSON document with ``--json``: answer, stop reason,
steps, every tool call with its decision, spend, thread), read back from the run's trace.

Exit codes: 0 the agent answered; 1 it stopped short (budget, steps, no progress, a failed
evidence check) or, in a session, paused on an approval (the output says how to answer it:
``grapharc session approve|reject THREAD``); 2 it could not run. With a session store asks
become durable approvals; without, an ask is refused and the model is told why.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from uuid import uuid4

import typer

from grapharc.cli.options import (
    ConfigFile,
    Folder,
    LeaseSeconds,
    MaxCostUsd,
    MaxIterations,
    MaxSeconds,
    MaxTokens,
    OptionType,
    Ranged,
    ReadableFile,
    Sessions,
    TenantOption,
    TraceOutput,
    option,
    sessions_flag,
    shown,
)
from grapharc.cli.output import ExitCode, JsonOption, emit, fail, terminal_text
from grapharc.config.values import Count, Number
from grapharc.errors import GraphARCError
from grapharc.harness.trace_names import MAX_THREAD_ID_CHARS, thread_id_problem, trace_file_name

if TYPE_CHECKING:
    from grapharc.config.settings import Config
    from grapharc.harness.setup import AgentSettings

MAX_SCRIPT_BYTES = 4 * 1024 * 1024
AllowGlobs = Annotated[list[str] | None, typer.Option(
    "--allow", metavar="GLOB",
    help="Allow tools whose name matches this glob (repeatable; a --policy deny still wins).")]
AskGlobs = Annotated[list[str] | None, typer.Option(
    "--ask", metavar="GLOB", help="Ask before running tools matching this glob (repeatable).")]
DenyGlobs = Annotated[list[str] | None, typer.Option(
    "--deny", metavar="GLOB", help="Deny tools matching this glob: never shown, never run (repeatable).")]
McpServers = Annotated[list[str] | None, typer.Option(
    "--mcp-server", metavar="NAME=SERVER",
    help="Use an MCP server's tools, as NAME.tool (repeatable; needs grapharc-mcp). SERVER is an "
         "http:// or https:// URL (streamable HTTP), a JSON object with the keys of [mcp.servers.NAME] "
         "in grapharc.toml (env, headers, prefix, timeouts; secrets as ${VAR}), or else a command line, "
         "split as a shell splits words but run without one (stdio). A NAME also defined in "
         "grapharc.toml or the policy document is refused.")]


def _limit(flag: str, high: int, what: str) -> Any:
    """A per-call limit flag; its setting is the flag's name with underscores (``tool_memory_mb``)."""
    setting = flag[2:].replace("-", "_")
    return option(flag, kind=Ranged(Count(0, high), "N"),
                  help=f"{what}; 0 lifts it (default: $GRAPHARC_{setting.upper()}, or "
                       f"{setting} in grapharc.toml).")


ToolMemory = Annotated[int | None, _limit("--tool-memory-mb", 1 << 30,
                                          "Address space of a tool call's processes, MiB; built-in 1024")]
ToolProcesses = Annotated[int | None, _limit("--tool-processes", 1 << 22,
                                             "More processes a tool call may start; built-in 256")]
ToolCpu = Annotated[int | None, _limit("--tool-cpu-seconds", 10**8,
                                       "CPU seconds of each process of a tool call; built-in 300")]
ToolFile = Annotated[int | None, _limit("--tool-file-mb", 1 << 30,
                                        "Largest file a tool call's processes may write, MiB; built-in 1024")]


class AgentInputError(GraphARCError):
    """An agent flag naming something that cannot be used (a script, a trace, a sessions folder)."""


class ThreadId(OptionType):
    """A thread id: never a path (see ``grapharc.harness.trace_names``)."""

    metavar = "ID"

    def describe(self) -> str:
        return f"1 to {MAX_THREAD_ID_CHARS} characters, no control characters"

    def convert(self, value: Any) -> str:
        problem = thread_id_problem(str(value))
        if problem is not None:
            raise ValueError(f"thread id {shown(value)}: {problem}")
        return str(value)


def add_agent_command(app: typer.Typer) -> None:
    """Register ``agent`` on ``app``."""
    app.command("agent")(agent_command)


def agent_command(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    workspace: Annotated[Path, option("--workspace", kind=Folder("workspace", must_exist=True),
                                      help="The folder the tools are confined to.")],
    model: Annotated[str | None, typer.Option(
        help="Model spec backend/model of a tool-calling backend (default: $GRAPHARC_MODEL, or model "
             "in grapharc.toml).")] = None,
    script: Annotated[Path | None, option(
        "--script", kind=ReadableFile("script"),
        help="mock/ only: a JSON list of scripted replies (strings, or objects with 'content' and "
             "'tool_calls').")] = None,
    policy: Annotated[Path | None, option(
        "--policy", kind=ReadableFile("policy file"),
        help="Policy TOML document (its tool rules; default: $GRAPHARC_POLICY, or policy in "
             "grapharc.toml).")] = None,
    allow: AllowGlobs = None,
    ask: AskGlobs = None,
    deny: DenyGlobs = None,
    mcp_server: McpServers = None,
    executor: Annotated[str, typer.Option(
        help="local, sandboxed or container (the last two from grapharc-tools).")] = "local",
    executor_option: Annotated[list[str] | None, typer.Option(
        metavar="KEY=VALUE",
        help="KEY=VALUE for the executor (repeatable), e.g. image=my-tools:1 for container; "
             "a VALUE that reads as JSON (a number, true) is taken as one.")] = None,
    sessions: Sessions = None,
    thread: Annotated[str | None, option("--thread", kind=ThreadId(),
                                         help="Thread id (default: a new one).")] = None,
    lease: LeaseSeconds = 30.0,
    trace: Annotated[Path | None, option(
        "--trace", kind=TraceOutput(),
        help="Append JSONL events here (default: none kept, or <sessions>/traces/<thread>.jsonl, an id "
             "that is not a plain file name named by its digest).")] = None,
    tenant: TenantOption = None,
    max_steps: Annotated[int, option("--max-steps", kind=Ranged(Count(1, 10_000), "N"),
                                     help="Model calls at most.")] = 20,
    tool_timeout: Annotated[float, option(
        "--tool-timeout", kind=Ranged(Number(0, 86_400, "seconds"), "SECONDS"),
        help="Seconds a tool call may take.")] = 60.0,
    max_tokens: MaxTokens = None,
    max_iterations: MaxIterations = None,
    max_seconds: MaxSeconds = None,
    max_cost_usd: MaxCostUsd = None,
    tool_memory_mb: ToolMemory = None,
    tool_processes: ToolProcesses = None,
    tool_cpu_seconds: ToolCpu = None,
    tool_file_mb: ToolFile = None,
    config: ConfigFile = None,
    as_json: JsonOption = False,
) -> None:
    """Run a tool-using agent on a workspace, every call governed and on the trace.

    The model, policy, sessions, trace, tenant and budget resolve like every command's settings:
    flag > $GRAPHARC_* > grapharc.toml (``grapharc config show --command agent`` shows them)."""
    from grapharc.governed.provenance import settings_provenance
    from grapharc.governed.settings import resolve_config, tool_limits
    from grapharc.harness.setup import AgentSettings, agent_policy, tool_source_settings

    flags = {"model": model, "policy": policy, "sessions": sessions, "trace": trace, "tenant": tenant,
             "max_tokens": max_tokens, "max_iterations": max_iterations, "max_seconds": max_seconds,
             "max_cost_usd": max_cost_usd, "tool_memory_mb": tool_memory_mb,
             "tool_processes": tool_processes, "tool_cpu_seconds": tool_cpu_seconds,
             "tool_file_mb": tool_file_mb}
    try:
        resolved = resolve_config("agent", flags, config_path=config)
        spec = require_model(resolved.value("model"))
        loaded = agent_policy(resolved)
        settings = AgentSettings(
            task=task, workspace=str(workspace.expanduser().resolve()), model=spec,
            policy=loaded.origin if loaded else None, policy_source=loaded.source if loaded else None,
            allow=tuple(allow or ()), ask=tuple(ask or ()), deny=tuple(deny or ()), executor=executor,
            executor_options=key_values(executor_option or [], "--executor-option"), max_steps=max_steps,
            tool_timeout=tool_timeout, budget=configured_ceilings(resolved), tenant=resolved.value("tenant"),
            model_options=script_options(spec, script), limits=tool_limits(resolved),
            tool_sources=tool_source_settings(resolved, loaded, {"mcp": mcp_server or []}))
        where, trace_at = resolved.value("sessions"), resolved.value("trace")
        if where is not None:
            document = run_in_session(settings, where, thread, trace_at, lease, as_json)
        else:
            document = run_once(settings, thread or uuid4().hex[:12], trace_at, as_json)
    except GraphARCError as exc:
        reported, code = _as_reported(exc)
        fail(reported, as_json, code)
    finish({**document, **settings_provenance(resolved, loaded)}, as_json)


def _as_reported(exc: GraphARCError) -> tuple[GraphARCError, ExitCode]:
    """The error and its exit code: a --script that ran out is the run's negative answer (1), with
    the CLI's way to fix it; anything else could not run (2)."""
    scripted = sys.modules.get("grapharc.models.scripted")  # loaded once a mock/ model was built
    if scripted is None or not isinstance(exc, scripted.ScriptExhaustedError):
        return exc, ExitCode.CANNOT_RUN
    exc.hint = "add replies to the --script file: the agent takes one per model turn"
    return exc, ExitCode.NEGATIVE


def require_model(spec: str | None) -> str:
    """The model spec some layer named; an agent has no default model."""
    if spec is None:
        raise AgentInputError("no model is named for the agent",
                              hint="pass --model backend/model (e.g. mock/demo), or set GRAPHARC_MODEL "
                                   "or model in grapharc.toml")
    return spec


def configured_ceilings(config: Config) -> dict[str, Any]:
    """The budget ceilings some layer set (the agent's budget keeps only those)."""
    return {name: config.value(name) for name in ("max_tokens", "max_iterations", "max_seconds",
                                                  "max_cost_usd") if config.value(name) is not None}


def script_options(model: str, script: Path | None) -> dict[str, Any]:
    """The mock/ model's script from ``--script`` (replies picked by conversation turn)."""
    if script is None:
        return {}
    from grapharc._files import read_user_text
    from grapharc.models import parse_spec

    if parse_spec(model)[0] != "mock":
        raise AgentInputError(f"--script scripts the mock/ backend, not {model!r}",
                              hint="drop --script, or use --model mock/<name>")
    text = read_user_text(script, what="script", limit=MAX_SCRIPT_BYTES, error=AgentInputError, kind="JSON")
    try:
        replies = json.loads(text)
    except ValueError as exc:
        raise AgentInputError(f"script {script} is not JSON: {exc}") from None
    if replies == []:
        raise AgentInputError(f"script {script} holds no replies",
                              hint='give one reply per model turn, e.g. ["done"]')
    return {"responses": replies, "follow_conversation": True}


def key_values(pairs: list[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` flags as a dict; a VALUE that parses as JSON is taken as that value."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.isidentifier():
            raise AgentInputError(f"{flag} {pair!r} is not KEY=VALUE", hint=f"e.g. {flag} image=my-tools:1")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def outside(workspace: str, path: Path, what: str) -> Path:
    """``path`` resolved, refused if inside the workspace (the agent's tools could rewrite it)."""
    resolved = path.expanduser().resolve()
    if resolved.is_relative_to(workspace):
        raise AgentInputError(f"the {what} {resolved} is inside the workspace {workspace}, where the "
                              "agent's own tools could change it",
                              hint=f"keep the {what} outside the workspace")
    return resolved


def trace_target(workspace: str, trace: Path | str) -> Path | str:
    """Where the agent's trace goes: a traces store URI as given, else a file outside the workspace."""
    return trace if isinstance(trace, str) else outside(workspace, trace, "trace")


def run_once(settings: AgentSettings, thread: str, trace: Path | str | None,
             as_json: bool) -> dict[str, Any]:
    """Run the agent to its end here; the document is read back from the trace."""
    from grapharc.harness.report import agent_document, thread_events
    from grapharc.harness.run import run_agent

    with tempfile.TemporaryDirectory(prefix="grapharc-agent-") as scratch:
        path = trace_target(settings.workspace, trace) if trace else Path(scratch) / "trace.jsonl"
        values = run_agent(settings, trace=path, thread_id=thread, on_update=Progress(as_json))
        return agent_document(values, thread_events(path, thread), thread=thread)


def run_in_session(settings: AgentSettings, sessions: Path | str, thread: str | None,
                   trace: Path | str | None, lease: float, as_json: bool) -> dict[str, Any]:
    """Start the agent as a durable session (a folder, or a store URI); the document says where it
    stands. A folder keeps the trace in its ``traces/`` unless one is named; a URI needs one named."""
    from grapharc.harness.sessions import start_agent_session
    from grapharc.models.spec import resolve_backend
    from grapharc.session.manager import SessionManager

    resolve_backend(settings.model)  # a spec that names no backend is refused before a store exists
    folder = sessions if isinstance(sessions, str) else outside(settings.workspace, sessions,
                                                                 "sessions folder")
    thread = thread or uuid4().hex[:12]
    if trace is not None:
        path = trace_target(settings.workspace, trace)
    elif isinstance(folder, Path):
        path = session_trace(settings.workspace, folder, thread)
    else:
        raise AgentInputError(f"an agent session in {folder} needs a trace named for it",
                              hint="pass --trace FILE (or set trace in grapharc.toml)")
    manager = SessionManager(folder, lease_seconds=lease)
    try:
        session = start_agent_session(manager, settings, trace=path, thread_id=thread,
                                      on_update=Progress(as_json))
        return session_document(manager, session, path, folder)
    finally:
        manager.close()


def session_trace(workspace: str, folder: Path, thread: str) -> Path:
    """The trace a session folder keeps for ``thread`` (under its ``traces/``, named by
    ``trace_file_name``), checked as ``--trace`` is: outside the workspace, a file a trace may go in."""
    problem = thread_id_problem(thread)
    if problem is not None:
        raise AgentInputError(f"thread id {shown(thread)}: {problem}")
    path = folder / "traces" / trace_file_name(thread)
    try:
        return outside(workspace, TraceOutput().convert(path), "trace")
    except ValueError as exc:
        raise AgentInputError(f"the trace of thread {shown(thread)} cannot go to {path}: {exc}",
                              hint="name a trace with --trace") from None


def session_document(manager: Any, session: Any, trace: Path | str, folder: str | Path) -> dict[str, Any]:
    """An agent thread's document: the agent's result, its session status, and open approvals."""
    from grapharc.harness.report import agent_document, thread_events
    from grapharc.stores.masking import masked

    values = manager.values(session.thread_id)
    document = agent_document(values, thread_events(trace, session.thread_id), thread=session.thread_id,
                              status=session.status)
    document["sessions"] = masked(str(folder))
    document["approvals"] = [hold.to_dict() for hold in session.holds]
    if session.error:
        document["error"] = session.error
    return document


def finish(document: dict[str, Any], as_json: bool) -> None:
    """Print the document, every configured secret redacted (the model may have written one), and
    exit 0 when the agent answered, 1 otherwise; say on stderr when asks went unanswered because
    no session could hold them."""
    from grapharc.decisions.approval import unanswered_reason
    from grapharc.redaction import current_redactor

    document = current_redactor().scrub(document)
    unanswered = [call for call in document["tool_calls"] if call.get("approval") == "refused"
                  and unanswered_reason() in str(call.get("reason"))]
    if unanswered and not as_json:
        sys.stderr.write(f"hint: {len(unanswered)} call(s) needed an approval nobody could give; "
                         "run with --sessions DIR to pause on asks and answer them\n")
    emit(document, as_json, render, ExitCode.OK if document["ok"] else ExitCode.NEGATIVE)


def render(doc: dict[str, Any]) -> str:
    """The human view: the answer and why the agent stopped, or what a paused thread waits on
    (``emit`` hands it a terminal-safe copy of the document)."""
    calls = doc["tool_calls"]
    refused = sum(1 for call in calls if call["outcome"] != "ok")
    lines = []
    if doc["status"] == "paused":
        thread, where = doc["thread"], doc["sessions"]
        lines.append(f"PAUSED    thread {thread} waits on {len(doc['approvals'])} approval(s)")
        lines += [f"  {hold['approval_id']}: {hold['question']}" for hold in doc["approvals"]]
        lines += [f"  approve : grapharc session approve {thread} {sessions_flag(where)}",
                  f"  reject  : grapharc session reject {thread} {sessions_flag(where)}"]
    else:
        lines.append(f"answer    : {doc['answer']}")
    if doc.get("error"):
        lines.append(f"error     : {doc['error']}")
    lines.append(f"stopped   : {doc['stop_reason'] or doc['status']} after {doc['steps']} step(s); "
                 f"{len(calls)} tool call(s), {refused} not run or failed")
    spent = doc["spend"]
    unpriced = f" and {spent['unpriced_calls']} unpriced model call(s)" if spent.get("unpriced_calls") else ""
    lines.append(f"spend     : {spent['tokens']} tokens, ${spent['cost_usd']:.4f}{unpriced}")
    lines.append(f"thread    : {doc['thread']}")
    return "\n".join(lines)


class Progress:
    """Writes each tool call and what became of it to stderr as it happens (not with --json)."""

    def __init__(self, as_json: bool) -> None:
        from grapharc.redaction import current_redactor

        self.quiet = as_json
        self.asked: dict[str, dict[str, Any]] = {}
        self.redactor = current_redactor()

    def remember(self, values: dict[str, Any]) -> Progress:
        """Know the calls an earlier turn asked for (a resumed thread answers them now)."""
        for message in values.get("messages") or []:
            for call in getattr(message, "tool_calls", None) or []:
                self.asked[str(call.get("id"))] = call
        return self

    def __call__(self, node: str, writes: dict[str, Any]) -> None:
        if self.quiet:
            return
        self.remember(writes)
        for message in writes.get("messages") or []:
            if getattr(message, "type", "") == "tool":
                call = self.asked.get(str(message.tool_call_id), {})
                arguments = json.dumps(call.get("args"), ensure_ascii=False, default=str)
                text = str(message.content)
                outcome = text.splitlines()[0] if text.startswith("error:") else f"ok ({len(text)} chars)"
                line = f"tool {message.name} {_clip(arguments)} -> {_clip(outcome, 200)}"
                sys.stderr.write(terminal_text(self.redactor.redact(line)) + "\n")


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
