"""One tool call of an agent, governed: whether the tool is offered, what the permission rules
say (with a policy document, its tool rules over the flag rules, audited by its engine), an ask
put to the one approval model with the call's arguments, the ledger's memory of an earlier
attempt (a side-effecting call is never repeated blindly), the executor, and output too large
to show stored whole; each step on the run's trace.

``AgentNode``'s ``tools`` node (``grapharc.harness.agent``) runs every call of the model's reply
through these.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from grapharc.decisions.approval import Answer, ApprovalRequest, Approver, request_approval, unanswered_reason
from grapharc.decisions.audit import PolicyDecision
from grapharc.decisions.decision import Decision
from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.errors import GraphARCError
from grapharc.harness.executors import Executor, ExecutorUnavailableError, ToolTimeoutError
from grapharc.harness.ledger import COMPLETED, ToolCallLedger, digest
from grapharc.harness.overflow import shown
from grapharc.harness.requested import invalid_reason
from grapharc.harness.tools import SideEffect, Tool, ToolArgumentError, ToolRegistry
from grapharc.policy.engine import PolicyEngine
from grapharc.runtime.context import CURRENT_RUN
from grapharc.trace import schema as ts
from grapharc.trace.writer import exception_document, node_identity


class GovernedToolCalls:
    """An agent's tool calls and its trace records; ``AgentNode`` supplies the settings below."""

    name: str
    tools: ToolRegistry
    permissions: PermissionPolicy
    policy: PolicyEngine | None
    tenant: str | None
    executor: Executor
    approver: Approver | None
    workspace: Path
    tool_timeout: float
    output_limit: int
    delegated: bool

    def _call(self, config: RunnableConfig, ledger: ToolCallLedger, step: int, index: int,
              call: dict[str, Any]) -> tuple[str, bool]:
        """One tool call: (what the model is told, whether an earlier attempt left it uncertain)."""
        name, call_id = self.tools.canonical(str(call.get("name"))), str(call.get("id") or index)
        verdict = self._decide(name)
        fields = {ts.TOOL: name, ts.CALL_ID: call_id, ts.RULE_ID: verdict.rule_id}
        if name not in self.tools or verdict.decision is Decision.DENY:
            reason = verdict.reason if name in self.tools else "no tool of this name is offered"
            self._record(config, "tools", ts.PERMISSION, {**fields, ts.DECISION: "deny", ts.REASON: reason})
            return f"error: no tool named {name!r} is available to you", False
        tool = self.tools.get(name)
        try:
            unusable = invalid_reason(call)
            if unusable is not None:
                raise ToolArgumentError(f"tool {name!r}: {unusable}")
            arguments = tool.arguments(call.get("args"))
        except ToolArgumentError as exc:  # refused before anyone is asked about a call that cannot run
            self._record(config, "tools", ts.PERMISSION,
                         {**fields, ts.DECISION: verdict.decision.value, ts.REASON: verdict.reason})
            self._outcome(config, tool, call_id, "refused", 0.0, exception=exc)
            return f"error: {exc}", False
        refusal = self._permitted(config, tool, arguments, verdict, fields)
        if refusal is not None:
            return refusal, False
        call_digest = digest(name, arguments)
        key = ToolCallLedger.key(ledger.thread_id, "tools", step, index, call_digest)
        guarded = tool.side_effect is not SideEffect.READ or not tool.idempotent
        earlier = ledger.recorded(key) if guarded else None
        if earlier is not None and earlier.state == COMPLETED:
            self._outcome(config, tool, call_id, "replayed", 0.0, digest=call_digest)
            return self._shown(earlier.result, call_digest)[0], False
        if earlier is not None:
            message = (f"an earlier attempt started this {tool.side_effect.value} call and may have "
                       "completed it; it is not repeated blindly")
            self._outcome(config, tool, call_id, "refused", 0.0, digest=call_digest,
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
            self._outcome(config, tool, call_id, "timeout", _ms(started), digest=call_digest,
                          exception=exc)
            return f"error: {exc}"
        except ExecutorUnavailableError:  # nothing the model can work around: the run stops
            raise
        except Exception as exc:  # the tool's own failure is the model's to read, not the run's
            self._outcome(config, tool, call_id, "error", _ms(started), digest=call_digest,
                          exception=exc)
            return f"error: {type(exc).__name__}: {exc}"
        if ledger is not None:
            ledger.completed(key, result)
        text, reference = self._shown(result, call_digest)
        self._outcome(config, tool, call_id, "ok", _ms(started), digest=call_digest,
                      chars=len(_result_text(result)), reference=reference)
        return text

    def _shown(self, result: Any, call_digest: str) -> tuple[str, str | None]:
        """(the result as the model is shown it, the stored whole's path when it was too large)."""
        return shown(_result_text(result), workspace=self.workspace, name=call_digest[:16],
                     limit=self.output_limit)

    def _outcome(self, config: RunnableConfig, tool: Tool, call_id: str, outcome: str, duration_ms: float,
                 *, digest: str | None = None, exception: BaseException | None = None,
                 chars: int | None = None, reference: str | None = None) -> None:
        """The ``tool`` event of one call: what ran it (the tool's own executor, if it has one,
        and its server) and what became of it."""
        runner = tool.executor if tool.executor is not None else self.executor
        fields: dict[str, Any] = {ts.TOOL: tool.name, ts.CALL_ID: call_id, ts.OUTCOME: outcome,
                                  ts.DURATION_MS: duration_ms, ts.EXECUTOR: runner.name}
        if tool.server is not None:
            fields[ts.SERVER] = tool.server
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


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
