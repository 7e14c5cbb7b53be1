"""AgentNode: a governed tool loop — observe -> model -> permission -> executor -> budget -> evidence.

``AgentNode(...).graph()`` is the loop as a GraphARC graph of three nodes, so each model call
and each batch of tool calls is its own checkpointed step:

* ``model`` observes the conversation, checks the budget can pay for a call, and calls the
  model bound to the tools it may see (a denied tool's schema is never shown);
* ``tools`` runs each call the model asked for: is the tool offered, what does the permission
  policy say (deny -> ask -> allow, unmatched is deny; with a policy document, its tool rules
  decide with the flag rules layered under them, every decision is audited by its
  ``PolicyEngine`` and asks are routed by its approval router; an ask goes to the one approval
  model, so inside a session it is a durable approval), are the arguments valid, has an earlier
  attempt already done it (side-effecting calls carry an idempotency key, see
  ``grapharc.harness.ledger``), then the executor runs it; output too large to show whole is
  stored in the workspace and shown truncated (``grapharc.harness.overflow``);
* ``evidence`` checks the final answer before it leaves (an ``evidence`` callable; none
  configured says so on the trace).

Every sub-step is on the trace (phases ``model``, ``permission``, ``tool``, ``evidence``),
tokens and cost are charged to the run's budget per call by the kernel, and the loop stops
with a stated reason: ``answered``, ``max_steps``, ``budget``, ``no_progress`` (the same calls
``window`` times running), ``no_evidence`` or ``uncertain_side_effect``. A backend that runs its
own agent loop (``delegates_tools``: the Claude CLI) cannot be governed call by call: the
node hands it the whole task, warns ``DelegatedToolUseWarning`` when built, and marks every
event ``executor=delegated``.
"""

from __future__ import annotations

import json
import operator
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from pydantic import Field

from grapharc.decisions.approval import Answer, ApprovalRequest, Approver, request_approval, unanswered_reason
from grapharc.decisions.audit import PolicyDecision
from grapharc.decisions.decision import Decision
from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.errors import GraphARCError
from grapharc.harness.executors import Executor, ExecutorUnavailableError, LocalExecutor, ToolTimeoutError
from grapharc.harness.ledger import COMPLETED, ToolCallLedger, digest
from grapharc.harness.overflow import shown
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError, ToolRegistry
from grapharc.policy.engine import PolicyEngine
from grapharc.runtime.budget import Budget, BudgetExceededError
from grapharc.runtime.context import CURRENT_RUN, record_stop_reason
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.runtime.tokens import charge_hand
from grapharc.trace import schema as ts
from grapharc.trace.writer import exception_document, node_identity

INSTRUCTIONS = ("You are an agent working in a workspace directory. Use the tools you are given to do "
                "the task; paths are relative to the workspace. When the task is done, reply with a "
                "short answer and no tool call.")
ANSWERED, STOPPED = "finished", "stopped"
Evidence = Callable[[str, Path], tuple[bool, str]]
"""``evidence(answer, workspace) -> (ok, detail)``: whether the answer may leave the node."""


class DelegatedToolUseWarning(UserWarning):
    """An agent whose backend runs its own tool loop: its calls are not governed by this graph."""


@dataclass(frozen=True)
class DelegatedRun:
    """What a backend that ran the whole task itself reports: its answer and its own spend.

    A delegating model (``delegates_tools = True``) offers
    ``run_delegated(task, *, workspace, timeout) -> DelegatedRun``; the agent charges the spend
    to the run's budget by hand, since no model call of the graph's own saw it.
    """

    text: str
    tokens: int = 0
    cost_usd: float | None = None


class AgentSetupError(GraphARCError):
    """An agent built with something it cannot run with."""


class AgentState(GraphARCState):
    """The agent's conversation (LangChain messages) and where it stands."""

    task: str
    messages: Annotated[list[AnyMessage], operator.add] = Field(default_factory=list)
    steps: int = 0
    calls_seen: Annotated[list[str], operator.add] = Field(default_factory=list)
    answer: str = ""
    status: str = "running"
    stop_reason: str | None = None


class AgentNode:
    """The governed tool loop over ``tools`` for one ``workspace`` (see the module docstring)."""

    def __init__(self, model: Any, tools: ToolRegistry, *, workspace: str | Path,
                 permissions: PermissionPolicy | None = None, policy: PolicyEngine | None = None,
                 tenant: str | None = None, executor: Executor | None = None,
                 approver: Approver | None = None, evidence: Evidence | None = None,
                 max_steps: int = 20, window: int = 3, tool_timeout: float = 60.0,
                 output_limit: int = 8000, instructions: str = INSTRUCTIONS, name: str = "agent",
                 budget: Budget | None = None) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        if not self.workspace.is_dir():
            raise AgentSetupError(f"workspace {self.workspace} is not a directory",
                                  hint="create it first, or name an existing directory")
        if self.workspace in {Path(self.workspace.anchor), Path.home().resolve()}:
            raise AgentSetupError(f"workspace {self.workspace} would hand the agent the whole "
                                  "filesystem or your home folder",
                                  hint="give the agent a folder of its own, e.g. a project checkout")
        if not isinstance(tools, ToolRegistry):
            raise AgentSetupError(f"tools must be a ToolRegistry, got {type(tools).__name__}")
        for label, value in (("max_steps", max_steps), ("window", window), ("output_limit", output_limit)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AgentSetupError(f"{label} must be a positive integer, got {value!r}")
        self.model = model
        self.tools = tools
        self.permissions = permissions if permissions is not None else PermissionPolicy()
        self.policy = policy
        self.tenant = tenant
        self.executor: Executor = executor if executor is not None else LocalExecutor()
        self.approver = approver
        self.evidence = evidence
        self.max_steps, self.window = max_steps, window
        self.tool_timeout = tool_timeout
        self.output_limit = output_limit
        self.instructions = instructions
        self.name = name
        self.budget = budget or Budget()
        self.delegated = bool(getattr(model, "delegates_tools", False))
        if self.delegated:
            warnings.warn(f"agent {name!r}: the model runs its own tool loop (every tool it has, under "
                          "its own permissions); this graph's permission policy and executor do not "
                          "govern it. Filter DelegatedToolUseWarning to an error to refuse this.",
                          DelegatedToolUseWarning, stacklevel=2)
        elif not callable(getattr(model, "bind_tools", None)):
            raise AgentSetupError(f"model {type(model).__name__} cannot call tools; use a tool-calling "
                                  "backend: openrouter/, openai/, ollama/, or mock/ with scripted "
                                  "tool calls")

    # -- the graph ---------------------------------------------------------------------------

    def graph(self) -> GraphARC:
        """The loop as a graph over ``AgentState`` (input: ``{"task": ...}``).

        Its nodes read the state without a private copy (``copy_state=False``, marked on the
        trace): they are this module's own code, never mutate what they read, and the
        conversation they would copy grows with every step.
        """
        graph = GraphARC(AgentState, name=self.name, budget=self.budget)
        if self.delegated:
            graph.add_node("delegate", self._delegate, writes={"messages", "answer", "status", "stop_reason"},
                           copy_state=False)
            graph.add_edge(START, "delegate")
            graph.add_edge("delegate", END)
            return graph
        graph.add_node("model", self._model, writes={"messages", "steps", "answer", "status", "stop_reason"},
                       copy_state=False)
        graph.add_node("tools", self._tools, writes={"messages", "calls_seen", "status", "stop_reason"},
                       copy_state=False)
        graph.add_node("evidence", self._evidence, writes={"status", "stop_reason"}, copy_state=False)
        graph.add_edge(START, "model")
        graph.add_conditional_edge("model", _after_model, {"tools": "tools", "evidence": "evidence",
                                                            "stop": END}, copy_state=False)
        graph.add_conditional_edge("tools", _after_tools, {"model": "model", "stop": END}, copy_state=False)
        graph.add_edge("evidence", END)
        return graph

    def effective_permissions(self) -> PermissionPolicy:
        """The rules that decide: the policy document's tool rules over the flag rules, if any."""
        if self.policy is None:
            return self.permissions
        return self.policy.permission_policy(self.tenant, flags=self.permissions)

    def visible(self) -> list[Tool]:
        """The tools the model is shown: every registered tool the policy does not deny."""
        shown_names = set(self.effective_permissions().visible(self.tools.names()))
        return [tool for tool in self.tools if tool.name in shown_names]

    # -- model ---------------------------------------------------------------------------------

    def _model(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Observe the conversation, check the budget, call the model."""
        if state.steps >= self.max_steps:
            return _stop("max_steps")
        run = CURRENT_RUN.get()
        if run is not None:
            try:
                run.meter.check_call_allowed(node="model")
            except BudgetExceededError:
                return _stop("budget")
        history = state.messages or [SystemMessage(self.instructions), HumanMessage(state.task)]
        bound = self.model.bind_tools([tool.schema() for tool in self.visible()])
        started = time.perf_counter()
        try:
            reply = bound.invoke(history)
        except BudgetExceededError:  # the call that crossed a ceiling: its reply is not acted on
            return _stop("budget")
        calls = list(getattr(reply, "tool_calls", None) or [])
        self._record(config, "model", ts.MODEL_CALL, {
            ts.DURATION_MS: (time.perf_counter() - started) * 1000.0, ts.TOOL_CALLS: len(calls),
            ts.MODEL: str(getattr(self.model, "model_name", type(self.model).__name__))})
        added = [] if state.messages else history
        writes: dict[str, Any] = {"messages": [*added, reply], "steps": state.steps + 1}
        if not calls:
            writes["answer"] = _text(reply.content)
        return writes

    # -- tools ---------------------------------------------------------------------------------

    def _tools(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Run every tool call of the model's last reply, each through permission and executor."""
        calls = list(getattr(state.messages[-1], "tool_calls", None) or [])
        ledger = ToolCallLedger.of(config)
        answers: list[ToolMessage] = []
        for index, call in enumerate(calls):
            content, uncertain = self._call(config, ledger, state.steps, index, call)
            answers.append(ToolMessage(content=content, tool_call_id=str(call.get("id") or index),
                                       name=str(call.get("name"))))
            if uncertain:
                return {"messages": answers, **_stop("uncertain_side_effect")}
        signature = json.dumps([[c.get("name"), c.get("args")] for c in calls], sort_keys=True, default=str)
        writes: dict[str, Any] = {"messages": answers, "calls_seen": [signature]}
        recent = [*state.calls_seen, signature][-self.window:]
        if len(recent) == self.window and len(set(recent)) == 1:
            writes.update(_stop("no_progress"))
        return writes

    def _call(self, config: RunnableConfig, ledger: ToolCallLedger, step: int, index: int,
              call: dict[str, Any]) -> tuple[str, bool]:
        """One tool call: (what the model is told, whether an earlier attempt left it uncertain)."""
        name, call_id = str(call.get("name")), str(call.get("id") or index)
        verdict = self._decide(name)
        fields = {ts.TOOL: name, ts.CALL_ID: call_id, ts.RULE_ID: verdict.rule_id}
        if name not in self.tools or verdict.decision is Decision.DENY:
            reason = verdict.reason if name in self.tools else "no tool of this name is offered"
            self._record(config, "tools", ts.PERMISSION, {**fields, ts.DECISION: "deny", ts.REASON: reason})
            return f"error: no tool named {name!r} is available to you", False
        tool = self.tools.get(name)
        try:
            arguments = tool.arguments(call.get("args"))
        except ToolArgumentError as exc:  # refused before anyone is asked about a call that cannot run
            self._record(config, "tools", ts.PERMISSION,
                         {**fields, ts.DECISION: verdict.decision.value, ts.REASON: verdict.reason})
            self._outcome(config, name, call_id, "refused", 0.0, exception=exc)
            return f"error: {exc}", False
        refusal = self._permitted(config, tool, arguments, verdict, fields)
        if refusal is not None:
            return refusal, False
        call_digest = digest(name, arguments)
        key = ToolCallLedger.key(ledger.thread_id, "tools", step, index, call_digest)
        guarded = tool.side_effect is not SideEffect.READ or not tool.idempotent
        earlier = ledger.recorded(key) if guarded else None
        if earlier is not None and earlier.state == COMPLETED:
            self._outcome(config, name, call_id, "replayed", 0.0, digest=call_digest)
            return self._shown(earlier.result, call_digest)[0], False
        if earlier is not None:
            message = (f"an earlier attempt started this {tool.side_effect.value} call and may have "
                       "completed it; it is not repeated blindly")
            self._outcome(config, name, call_id, "refused", 0.0, digest=call_digest,
                          exception=GraphARCError(message))
            return f"error: {message}", True
        if guarded:
            ledger.started(key)
        return self._execute(config, ledger if guarded else None, key, tool, arguments, call_id,
                             call_digest), False

    def _permitted(self, config: RunnableConfig, tool: Tool, arguments: dict[str, Any], verdict: _Verdict,
                   fields: dict[str, Any]) -> str | None:
        """None when an allowed call, or an ask approved for exactly these arguments, may run;
        else what the model is told. The decision is on the trace either way."""
        if verdict.decision is Decision.ASK:
            refusal = self._ask(tool.name, arguments, verdict)
            self._record(config, "tools", ts.PERMISSION,
                         {**fields, ts.DECISION: "ask", ts.APPROVAL: "refused" if refusal else "approved",
                          ts.REASON: refusal or verdict.reason})
            return None if refusal is None else f"error: calling {tool.name!r} needs an approval; {refusal}"
        self._record(config, "tools", ts.PERMISSION,
                     {**fields, ts.DECISION: "allow", ts.REASON: verdict.reason})
        return None

    def _decide(self, name: str) -> _Verdict:
        """What the rules say about a call of ``name`` (audited by the policy engine, if any)."""
        if self.policy is not None:
            decided = self.policy.check_tool(name, tenant=self.tenant, flags=self.permissions)
            return _Verdict(decided.decision, decided.record.rule_id, decided.record.reason,
                            decided.route or "human", decided)
        verdict = self.permissions.decide(name)
        rule = verdict.rule
        return _Verdict(verdict.decision, rule.id if rule else "", verdict.reason,
                        rule.route if rule else "human")

    def _ask(self, name: str, arguments: dict[str, Any], verdict: _Verdict) -> str | None:
        """None when the ask is approved, else why not (the one approval model decides, shown the
        call's arguments; with a policy document its approval router routes it and audits it)."""
        if self.policy is not None and verdict.decided is not None:
            approvers = {verdict.route: self.approver} if self.approver is not None else {}
            settled = self.policy.approval_router(approvers).settle(verdict.decided, arguments)
            return None if settled.decision == Decision.ALLOW else settled.reason
        request = ApprovalRequest("tool", name, verdict.rule_id, verdict.reason, verdict.route,
                                  arguments=arguments)
        answer = request_approval(request, self.approver)
        if answer is Answer.APPROVED:
            return None
        return "the approval was declined" if answer is Answer.DECLINED else unanswered_reason()

    def _execute(self, config: RunnableConfig, ledger: ToolCallLedger | None, key: str, tool: Tool,
                 arguments: dict[str, Any], call_id: str, call_digest: str) -> str:
        """Run the call on the executor; record it, and what became of it."""
        started = time.perf_counter()
        try:
            result = self.executor.run(tool, arguments, workspace=self.workspace, timeout=self.tool_timeout)
        except ToolTimeoutError as exc:
            self._outcome(config, tool.name, call_id, "timeout", _ms(started), digest=call_digest,
                          exception=exc)
            return f"error: {exc}"
        except ExecutorUnavailableError:  # nothing the model can work around: the run stops
            raise
        except Exception as exc:  # the tool's own failure is the model's to read, not the run's
            self._outcome(config, tool.name, call_id, "error", _ms(started), digest=call_digest,
                          exception=exc)
            return f"error: {type(exc).__name__}: {exc}"
        if ledger is not None:
            ledger.completed(key, result)
        text, reference = self._shown(result, call_digest)
        self._outcome(config, tool.name, call_id, "ok", _ms(started), digest=call_digest,
                      chars=len(_result_text(result)), reference=reference)
        return text

    def _shown(self, result: Any, call_digest: str) -> tuple[str, str | None]:
        """(the result as the model is shown it, the stored whole's path when it was too large)."""
        return shown(_result_text(result), workspace=self.workspace, name=call_digest[:16],
                     limit=self.output_limit)

    # -- evidence and delegation ---------------------------------------------------------------

    def _evidence(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Check the answer before it leaves; a failed check stops the agent short."""
        if self.evidence is None:
            ok, detail = True, "no evidence check is configured for this agent"
        else:
            ok, detail = self.evidence(state.answer, self.workspace)
        self._record(config, "evidence", ts.EVIDENCE, {ts.STATUS: "ok" if ok else "failed",
                                                        ts.DETAIL: detail})
        if not ok:
            return _stop("no_evidence")
        record_stop_reason("answered")
        return {"status": ANSWERED, "stop_reason": "answered"}

    def _delegate(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Hand the whole task to a backend that runs its own loop (ungoverned, marked so)."""
        started = time.perf_counter()
        result = self.model.run_delegated(state.task, workspace=self.workspace, timeout=self.tool_timeout)
        if not isinstance(result, DelegatedRun):
            raise AgentSetupError(f"{type(self.model).__name__}.run_delegated returned a "
                                  f"{type(result).__name__}, not a DelegatedRun")
        charge_hand(result.tokens, result.cost_usd)
        answer = result.text
        self._record(config, "delegate", ts.MODEL_CALL, {
            ts.DURATION_MS: _ms(started), ts.TOOL_CALLS: 0, ts.EXECUTOR: ts.DELEGATED,
            ts.MODEL: str(getattr(self.model, "model_name", type(self.model).__name__))})
        record_stop_reason("answered")
        return {"messages": [HumanMessage(state.task), AIMessage(answer)], "answer": answer,
                "status": ANSWERED, "stop_reason": "answered"}

    # -- the trace -----------------------------------------------------------------------------

    def _outcome(self, config: RunnableConfig, tool: str, call_id: str, outcome: str, duration_ms: float,
                 *, digest: str | None = None, exception: BaseException | None = None,
                 chars: int | None = None, reference: str | None = None) -> None:
        fields: dict[str, Any] = {ts.TOOL: tool, ts.CALL_ID: call_id, ts.OUTCOME: outcome,
                                  ts.DURATION_MS: duration_ms, ts.EXECUTOR: self.executor.name}
        if digest is not None:
            fields[ts.ARGS_DIGEST] = digest
        if exception is not None:
            fields[ts.EXCEPTION] = exception_document(exception)
        if chars is not None:
            fields[ts.OUTPUT_CHARS] = chars
        if reference is not None:
            fields[ts.REFERENCE] = reference
        self._record(config, "tools", ts.TOOL_CALL, fields)

    def _record(self, config: RunnableConfig, node: str, phase: str, fields: dict[str, Any]) -> None:
        """Write one sub-step of ``node`` on the run's trace (with the node's own step)."""
        run = CURRENT_RUN.get()
        if run is None or run.trace is None:
            return
        step = run.shift + int((config.get("metadata") or {}).get("langgraph_step", 0))
        event = node_identity(phase, run.run_id, run.thread_id, run.attempt, self.name, node, step)
        if self.delegated:
            fields = {**fields, ts.EXECUTOR: ts.DELEGATED}
        run.trace.write(event, fields)


@dataclass(frozen=True)
class _Verdict:
    """What the rules say about one tool call, and the engine's audited decision if there is one."""

    decision: Decision
    rule_id: str
    reason: str
    route: str
    decided: PolicyDecision | None = None


def _stop(reason: str) -> dict[str, Any]:
    """The writes that end the loop short, with the run's stop reason."""
    record_stop_reason(reason)
    return {"status": STOPPED, "stop_reason": reason}


def _after_model(state: AgentState) -> Literal["tools", "evidence", "stop"]:
    if state.status == STOPPED:
        return "stop"
    calls = getattr(state.messages[-1], "tool_calls", None) if state.messages else None
    return "tools" if calls else "evidence"


def _after_tools(state: AgentState) -> Literal["model", "stop"]:
    return "stop" if state.status == STOPPED else "model"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content or [])


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
