"""AgentNode: a governed tool loop whose every decision is code, on the trace."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agent_tools import registry
from langchain_core.messages import AIMessage

from grapharc.harness.agent import AgentNode, AgentSetupError, DelegatedRun, DelegatedToolUseWarning
from grapharc.harness.permissions import PermissionPolicy
from grapharc.observe.metrics import metrics
from grapharc.runtime.budget import Budget
from grapharc.testing import ScriptedChatModel
from grapharc.trace import schema as ts

ALLOW_ALL = PermissionPolicy.from_flags(allow=["*"])


def call(name: str, args: dict[str, Any], index: int = 1) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"c{index}"}


def reply(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=list(calls))


def run(tmp_path: Path, script: list[Any], *, permissions: PermissionPolicy = ALLOW_ALL,
        **options: Any) -> tuple[dict[str, Any], ScriptedChatModel, list[dict[str, Any]]]:
    model = ScriptedChatModel(responses=script)
    agent = AgentNode(model, registry(), workspace=tmp_path, permissions=permissions, **options)
    graph = agent.graph()
    trace = tmp_path / "trace.jsonl"
    graph.trace = trace
    compiled = graph.compile()
    out = compiled.invoke({"task": "keep notes"})
    compiled.close()
    return out, model, [json.loads(line) for line in trace.read_text().splitlines()]


def of_phase(events: list[dict[str, Any]], phase: str) -> list[dict[str, Any]]:
    return [event for event in events if event["phase"] == phase]


def test_the_loop_calls_tools_until_the_model_answers_and_every_step_is_on_the_trace(tmp_path):
    out, _, events = run(tmp_path, [reply(call("append_note", {"name": "todo", "text": "milk"})),
                                    reply(call("read_note", {"name": "todo"})), "noted"])
    assert (out["status"], out["stop_reason"], out["answer"]) == ("finished", "answered", "noted")
    assert (tmp_path / "todo.txt").read_text() == "milk\n"
    assert [e["tool"] for e in of_phase(events, "tool")] == ["append_note", "read_note"]
    assert [e["outcome"] for e in of_phase(events, "tool")] == ["ok", "ok"]
    assert len(of_phase(events, "model")) == 3 and len(of_phase(events, "evidence")) == 1
    validator = jsonschema.Draft202012Validator(ts.json_schema())
    assert all(not list(validator.iter_errors(event)) for event in events)
    document = metrics(tmp_path / "trace.jsonl", events[0]["run_id"]).to_document()
    assert document["node_executions"] == 6 and document["substeps"] > 0
    assert document["stop_reason"] == "answered"


def test_a_denied_tool_is_never_shown_and_calling_it_anyway_is_refused_on_the_trace(tmp_path):
    policy = PermissionPolicy.from_flags(allow=["*"], deny=["append_note"])
    out, model, events = run(tmp_path, [reply(call("append_note", {"name": "x", "text": "y"})), "gave up"],
                             permissions=policy)
    assert all("append_note" not in offered for offered in model.offered)
    assert not (tmp_path / "x.txt").exists()
    permission = of_phase(events, "permission")[0]
    assert (permission["tool"], permission["decision"]) == ("append_note", "deny")
    told = out["messages"][-2].content
    assert told == "error: no tool named 'append_note' is available to you"


def test_an_unmatched_tool_is_denied(tmp_path):
    policy = PermissionPolicy.from_flags(allow=["read_note"])
    _, model, _ = run(tmp_path, ["nothing to do"], permissions=policy)
    assert model.offered == [["read_note"]]


def test_an_ask_with_nobody_to_answer_is_refused_with_the_reason_and_an_approver_can_allow_it(tmp_path):
    policy = PermissionPolicy.from_flags(allow=["*"], ask=["append_note"])
    script = [reply(call("append_note", {"name": "todo", "text": "a"})), "ok"]
    out, _, events = run(tmp_path, script, permissions=policy)
    assert not (tmp_path / "todo.txt").exists()
    assert "needs an approval" in out["messages"][-2].content
    assert of_phase(events, "permission")[0]["decision"] == "ask"

    asked = []
    out, _, _ = run(tmp_path, script, permissions=policy, approver=lambda r: asked.append(r) or True)
    assert (tmp_path / "todo.txt").read_text() == "a\n"
    assert [(r.resource, r.subject) for r in asked] == [("tool", "append_note")]


def test_arguments_that_do_not_fit_are_refused_before_anything_runs_and_the_model_is_told(tmp_path):
    out, _, events = run(tmp_path, [reply(call("append_note", {"name": "../etc", "text": 3})), "sorry"])
    assert list(tmp_path.glob("*.txt")) == []
    assert of_phase(events, "tool")[0]["outcome"] == "refused"
    assert "tool 'append_note'" in out["messages"][-2].content


def test_an_output_too_large_is_stored_and_shown_truncated_with_its_reference(tmp_path):
    out, _, events = run(tmp_path, [reply(call("big_output", {"chars": 50_000})), "read"],
                         output_limit=1000)
    reference = of_phase(events, "tool")[0]["reference"]
    assert (tmp_path / reference).read_text() == "x" * 50_000
    told = out["messages"][-2].content
    assert told.startswith("x" * 1000) and reference in told and len(told) < 1300


@pytest.mark.parametrize(("options", "script", "reason"), [
    ({"max_steps": 2}, [reply(call("read_note", {"name": "a"}, i)) for i in range(5)], "max_steps"),
    ({"window": 3}, [reply(call("read_note", {"name": "a"}))] * 6, "no_progress"),
    ({"budget": Budget(max_tokens=60)}, [reply(call("read_note", {"name": "a"}, i)) for i in range(9)],
     "budget"),
    ({"evidence": lambda answer, ws: (False, "the test still fails")}, ["done"], "no_evidence"),
])
def test_the_loop_stops_short_with_a_stated_reason(tmp_path, options, script, reason):
    out, _, events = run(tmp_path, script, **options)
    assert (out["status"], out["stop_reason"]) == ("stopped", reason)
    assert events[-1]["stop_reason"] == reason


def test_a_tool_step_is_remembered_for_the_no_progress_window_as_a_digest_not_its_arguments(tmp_path):
    text = "y" * 5000
    out, _, events = run(tmp_path, [reply(call("append_note", {"name": "big", "text": text})), "done"])
    assert out["answer"] == "done"
    end = next(e for e in events if e["phase"] == "end" and e["node"] == "tools")
    assert [len(seen) for seen in end["state_delta"]["calls_seen"]] == [64]  # a sha256, whatever the step
    assert [len(seen) for seen in out["calls_seen"]] == [64]


def test_a_model_that_cannot_call_tools_is_refused_naming_backends_that_can(tmp_path):
    class Plain:
        pass

    with pytest.raises(AgentSetupError, match="openrouter/"):
        AgentNode(Plain(), registry(), workspace=tmp_path)


@pytest.mark.parametrize("folder", ["/", "~"])
def test_the_filesystem_root_or_the_home_folder_is_refused_as_a_workspace(folder):
    with pytest.raises(AgentSetupError, match="whole filesystem or your home folder"):
        AgentNode(ScriptedChatModel(responses=["done"]), registry(), workspace=folder)


def test_a_backend_that_runs_its_own_loop_is_delegated_with_a_warning_and_every_event_marked(tmp_path):
    class Delegating:
        delegates_tools = True
        model_name = "claude-cli/test"

        def run_delegated(self, task: str, *, workspace: Path, timeout: float) -> DelegatedRun:
            (workspace / "done.txt").write_text(task)
            return DelegatedRun("did it my way", tokens=120, cost_usd=0.5)

    with pytest.warns(DelegatedToolUseWarning):
        agent = AgentNode(Delegating(), registry(), workspace=tmp_path)
    graph = agent.graph()
    graph.trace = tmp_path / "t.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = graph.compile().invoke({"task": "go"})
    assert out["answer"] == "did it my way"
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [e["executor"] for e in events if e["phase"] == "model"] == ["delegated"]
    end = next(e for e in events if e["phase"] == "end")
    assert (end["tokens"], end["cost_usd"]) == (120, 0.5)  # the sub-agent's spend, on the node


def test_a_policy_documents_deny_beats_a_flag_allow_and_every_decision_is_audited(tmp_path):
    from grapharc.policy.engine import PolicyEngine

    engine = PolicyEngine({"version": "7", "rules": [
        {"id": "no-notes", "resource": "tool", "action": "deny", "tool": "append_note"},
        {"id": "review-big", "resource": "tool", "action": "ask", "tool": "big_output", "route": "leads"},
        {"id": "reads", "resource": "tool", "action": "allow", "tool": "read_*"}]})
    script = [reply(call("append_note", {"name": "a", "text": "b"}, 1), call("read_note", {"name": "a"}, 2),
                    call("big_output", {"chars": 3}, 3)), "done"]
    asked = []
    _, model, _ = run(tmp_path, script, permissions=ALLOW_ALL, policy=engine,
                      approver=lambda request: asked.append(request.route) or True)
    assert "append_note" not in model.offered[0] and not (tmp_path / "a.txt").exists()
    assert asked == ["leads"]
    audited = [(r.resource, r.subject, r.decision, r.rule_id) for r in engine.audit_log]
    assert audited == [("tool", "append_note", "deny", "no-notes"), ("tool", "read_note", "allow", "reads"),
                       ("tool", "big_output", "ask", "review-big"), ("approval", "big_output", "allow",
                                                                      "review-big")]
    assert all(r.policy_version == "7" for r in engine.audit_log)


def test_a_declined_asks_reason_is_its_own_approvals_even_when_the_engine_decides_meanwhile(tmp_path):
    # the engine is shared (one per server): another thread's decision can land on its log right
    # after this ask's approval, and must not become this refusal's reason
    from grapharc.policy.engine import PolicyEngine

    engine = PolicyEngine({"version": "1", "rules": [
        {"id": "review-big", "resource": "tool", "action": "ask", "tool": "big_output", "route": "leads"},
        {"id": "reads", "resource": "tool", "action": "allow", "tool": "read_*"}]})
    record = engine.record

    def record_then_another_runs_decision(resource: str, *args: Any) -> Any:
        recorded = record(resource, *args)
        if resource == "approval":
            engine.check_tool("read_note")  # what another thread, deciding at that moment, appends
        return recorded

    engine.record = record_then_another_runs_decision  # type: ignore[method-assign]
    _, _, events = run(tmp_path, [reply(call("big_output", {"chars": 3})), "ok"], permissions=ALLOW_ALL,
                       policy=engine, approver=lambda request: False)
    [permission] = of_phase(events, "permission")
    assert (permission["approval"], permission["reason"]) == ("refused", "declined via route 'leads'")


def test_an_ask_shows_the_approver_the_exact_arguments_and_bad_arguments_are_never_asked_about(tmp_path):
    policy = PermissionPolicy.from_flags(allow=["*"], ask=["append_note"])
    asked = []
    script = [reply(call("append_note", {"name": "BAD", "text": "a"})),
              reply(call("append_note", {"name": "todo", "text": "milk"}, 2)), "ok"]
    _, _, events = run(tmp_path, script, permissions=policy, approver=lambda r: asked.append(r) or True)
    assert [r.arguments for r in asked] == [{"name": "todo", "text": "milk"}]
    assert 'with {"name": "todo", "text": "milk"}?' in asked[0].question
    assert [e.get("approval") for e in of_phase(events, "permission")] == [None, "approved"]
