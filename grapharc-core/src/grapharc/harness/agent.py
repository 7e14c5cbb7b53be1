"""AgentNode: a governed tool loop — observe -> model -> permission -> executor -> budget -> evidence.

``AgentNode(...).graph()`` is the loop as a GraphARC graph of three nodes, so each model call
and each batch of tool calls is its own checkpointed step:

* ``model`` observes the conversation, checks the budget can pay for a call, and calls the
  model bound to the tools it may see (a denied tool's schema is never shown);
* ``tools`` runs each call the model asked for (``grapharc.harness.tool_calls``): is the tool
  offered, what does the permission policy say (deny -> ask -> allow, unmatched is deny; with
  a policy document, its tool rules decide with the flag rules layered under them, every
  decision is audited by its ``PolicyEngine`` and asks are routed by its approval router; an
  ask goes to the one approval model, so inside a session it is a durable approval), are the
  arguments valid, has an earlier
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

Secrets: building an agent wipes secret values from the process's initial environment block
and makes the process non-dumpable (``grapharc.harness.process_controls``; what could not be
done is warned as ``ProcessProtectionWarning``), the executor is wrapped so every tool result
is redacted before state, ledger or model see it (``grapharc.harness.redacting``), and so is
every model reply before it enters state: a tool call that quotes a secret runs with the
redaction mark in its place, so no call can carry one out. The ``task`` is kept as given.
Every call runs under the agent's ``CallLimits`` (``grapharc.harness.limits``).
"""

from __future__ import annotations

import hashlib
import json
import operator
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from pydantic import Field

from grapharc.decisions.approval import Approver
from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.errors import GraphARCError
from grapharc.harness.conversation import Conversation
from grapharc.harness.executors import Executor, LocalExecutor
from grapharc.harness.ledger import ToolCallLedger
from grapharc.harness.limits import CallLimits, limited
from grapharc.harness.process_controls import protect_agent_process
from grapharc.harness.redacting import RedactingExecutor
from grapharc.harness.requested import requested_calls, storable_reply
from grapharc.harness.tool_calls import GovernedToolCalls
from grapharc.harness.tools import Tool, ToolRegistry
from grapharc.models.labels import model_label
from grapharc.policy.engine import PolicyEngine
from grapharc.redaction import current_redactor
from grapharc.runtime.budget import Budget, BudgetExceededError
from grapharc.runtime.context import CURRENT_RUN, record_stop_reason
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.runtime.tokens import charge_hand, reply_spend
from grapharc.trace import schema as ts

INSTRUCTIONS = ("You are an agent working in a workspace directory. Use the tools you are given to do "
                "the task; paths are relative to the workspace. When the task is done, reply with a "
                "short answer and no tool call.")
ANSWERED, STOPPED = "finished", "stopped"
Evidence = Callable[[str, Path], tuple[bool, str]]
"""``evidence(answer, workspace) -> (ok, detail)``: whether the answer may leave the node."""


class DelegatedToolUseWarning(UserWarning):
    """An agent whose backend runs its own tool loop: its calls are not governed by this graph."""


class ToolRefusedWarning(UserWarning):
    """A tool a source announced while the agent ran, refused (its name was already taken)."""


class ProcessProtectionWarning(UserWarning):
    """This system could not keep commands from reading the agent process's secrets (not Linux)."""


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
    messages: Annotated[Conversation, operator.add] = Field(default_factory=list)
    steps: int = 0
    calls_seen: Annotated[list[str], operator.add] = Field(default_factory=list)
    """A digest of each tool step's calls (names and arguments), for the ``no_progress`` window:
    the arguments are in the conversation already, and a step's end on the trace stays small."""
    answer: str = ""
    status: str = "running"
    stop_reason: str | None = None


class AgentNode(GovernedToolCalls):
    """The governed tool loop over ``tools`` for one ``workspace`` (see the module docstring)."""

    def __init__(self, model: Any, tools: ToolRegistry, *, workspace: str | Path,
                 permissions: PermissionPolicy | None = None, policy: PolicyEngine | None = None,
                 tenant: str | None = None, executor: Executor | None = None,
                 approver: Approver | None = None, evidence: Evidence | None = None,
                 max_steps: int = 20, window: int = 3, tool_timeout: float = 60.0,
                 output_limit: int = 8000, instructions: str = INSTRUCTIONS, name: str = "agent",
                 budget: Budget | None = None, limits: CallLimits | None = None) -> None:
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
        self._bindings: dict[tuple[str, ...], tuple[Any, Any]] = {}
        self.tools = tools
        self.permissions = permissions if permissions is not None else PermissionPolicy()
        self.policy = policy
        self.tenant = tenant
        self.redactor = current_redactor()
        self.executor = RedactingExecutor(executor if executor is not None else LocalExecutor(),
                                          self.redactor)
        self.limits = limits if limits is not None else CallLimits()
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
        for problem in protect_agent_process():
            warnings.warn(f"agent {name!r}: {problem}; a command it runs may read this process's "
                          "secrets", ProcessProtectionWarning, stacklevel=2)

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
        for problem in self.tools.refresh():  # tools a source announced since: governed like the rest
            warnings.warn(f"agent {self.name!r}: {problem}", ToolRefusedWarning, stacklevel=2)
        bound = self._bound(self.visible())
        started = time.perf_counter()
        try:
            reply = storable_reply(bound.invoke(history))
        except BudgetExceededError:  # the call that crossed a ceiling: its reply is not acted on
            return _stop("budget")
        reply = self._redacted(reply)
        calls = requested_calls(reply)
        self._record(config, "model", ts.MODEL_CALL, {
            ts.DURATION_MS: (time.perf_counter() - started) * 1000.0, ts.TOOL_CALLS: len(calls),
            ts.MODEL: model_label(self.model), **reply_spend(reply)})
        added = [] if state.messages else history
        writes: dict[str, Any] = {"messages": [*added, reply], "steps": state.steps + 1}
        if not calls:
            writes["answer"] = _text(reply.content)
        return writes

    def _bound(self, shown: list[Tool]) -> Any:
        """The model bound to the schemas of ``shown``, built once per model and set of tools
        shown (a tool's schema is derived from its arguments model, which does not change)."""
        names = tuple(tool.name for tool in shown)
        model, bound = self._bindings.get(names, (None, None))
        if model is not self.model:
            bound = self.model.bind_tools([tool.schema() for tool in shown])
            self._bindings[names] = (self.model, bound)
        return bound

    def _redacted(self, reply: Any) -> Any:
        """The model's reply with every configured secret redacted from its text and its calls."""
        self.redactor = self.redactor.refreshed()
        if not self.redactor or not isinstance(reply, AIMessage):
            return reply
        fields = ("content", "tool_calls", "invalid_tool_calls", "additional_kwargs")
        update = {name: self.redactor.scrub(getattr(reply, name)) for name in fields}
        changed = any(update[name] is not getattr(reply, name) for name in fields)
        return reply.model_copy(update=update) if changed else reply

    # -- tools ---------------------------------------------------------------------------------

    def _tools(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        """Run every tool call of the model's last reply, each through permission and executor."""
        calls = requested_calls(state.messages[-1])
        ledger = ToolCallLedger.of(config)
        answers: list[ToolMessage] = []
        with limited(self.limits), self.tools.step():  # limits set once for the step, not per call
            for index, call in enumerate(calls):
                content, uncertain = self._call(config, ledger, state.steps, index, call)
                answers.append(ToolMessage(content=content, tool_call_id=str(call.get("id") or index),
                                           name=str(call.get("name"))))
                if uncertain:
                    return {"messages": answers, **_stop("uncertain_side_effect")}
        signature = hashlib.sha256(json.dumps([[c.get("name"), c.get("args")] for c in calls], sort_keys=True,
                                              default=str).encode()).hexdigest()
        writes: dict[str, Any] = {"messages": answers, "calls_seen": [signature]}
        recent = [*state.calls_seen, signature][-self.window:]
        if len(recent) == self.window and len(set(recent)) == 1:
            writes.update(_stop("no_progress"))
        return writes

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
        model = model_label(self.model)
        charge_hand(result.tokens, result.cost_usd, model=model)
        answer = result.text
        self._record(config, "delegate", ts.MODEL_CALL, {
            ts.DURATION_MS: (time.perf_counter() - started) * 1000.0, ts.TOOL_CALLS: 0,
            ts.EXECUTOR: ts.DELEGATED, ts.MODEL: model, ts.TOKENS: result.tokens,
            ts.COST_USD: result.cost_usd})
        record_stop_reason("answered")
        return {"messages": [HumanMessage(state.task), AIMessage(answer)], "answer": answer,
                "status": ANSWERED, "stop_reason": "answered"}

    # -- the trace -----------------------------------------------------------------------------


def _stop(reason: str) -> dict[str, Any]:
    """The writes that end the loop short, with the run's stop reason."""
    record_stop_reason(reason)
    return {"status": STOPPED, "stop_reason": reason}


def _after_model(state: AgentState) -> Literal["tools", "evidence", "stop"]:
    if state.status == STOPPED:
        return "stop"
    calls = requested_calls(state.messages[-1]) if state.messages else None
    return "tools" if calls else "evidence"


def _after_tools(state: AgentState) -> Literal["model", "stop"]:
    return "stop" if state.status == STOPPED else "model"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content or [])
