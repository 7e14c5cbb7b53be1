"""Per-call limits: set through the config layers (flag > env > grapharc.toml > built-in), checked,
and in force around every tool call an agent makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel
from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.governed.settings import resolve_config, tool_limits
from grapharc.harness import agent as agent_module
from grapharc.harness.agent import AgentNode
from grapharc.harness.limits import CallLimits, CallLimitsError, call_limits, limited
from grapharc.harness.setup import AgentSettings, AgentSettingsError, build_agent
from grapharc.harness.tools import Tool, ToolRegistry
from grapharc.testing import ScriptedChatModel


def test_each_limit_resolves_flag_over_env_over_file_and_unset_ones_keep_the_built_ins(tmp_path):
    (tmp_path / "grapharc.toml").write_text("[grapharc]\ntool_cpu_seconds = 7\ntool_file_mb = 3\n")
    config = resolve_config("agent", {"tool_memory_mb": 64}, cwd=tmp_path,
                            env={"GRAPHARC_TOOL_MEMORY_MB": "4096", "GRAPHARC_TOOL_FILE_MB": "2"})
    assert tool_limits(config) == {"memory_mb": 64, "cpu_seconds": 7, "file_mb": 2}
    assert CallLimits.from_settings(tool_limits(config)) == CallLimits(memory_mb=64, processes=256,
                                                                       cpu_seconds=7, file_mb=2)


@pytest.mark.parametrize("limits", [{"memory_mb": -1}, {"processes": True}, {"cpu": 5}])
def test_a_limit_out_of_range_or_unknown_is_refused_naming_it(limits):
    with pytest.raises(CallLimitsError, match="tool limit"):
        CallLimits.from_settings(limits)
    with pytest.raises(AgentSettingsError, match="tool limit"):
        build_agent(AgentSettings(task="t", workspace=".", model="mock/a", limits=limits))


def test_a_flag_out_of_range_is_a_clear_error_with_exit_code_2(tmp_path):
    result = CliRunner().invoke(build_app(), ["agent", "t", "--workspace", str(tmp_path), "--model",
                                              "mock/a", "--tool-memory-mb", "-5"])
    assert result.exit_code == 2 and "--tool-memory-mb" in result.output and "Traceback" not in result.output


class NoArgs(BaseModel):
    pass


def limits_now(workspace: str) -> dict[str, Any]:
    return call_limits().__dict__


def limits_shown(workspace: Path, calls: int) -> list[str]:
    """What ``limits_now`` answered to each of ``calls`` calls in one reply of an agent limited to 77 MB."""
    reply = AIMessage(content="", tool_calls=[{"name": "limits_now", "args": {}, "id": f"c{n}"}
                                              for n in range(calls)])
    agent = AgentNode(ScriptedChatModel(responses=[reply, "done"]),
                      ToolRegistry([Tool("limits_now", "the limits", NoArgs, limits_now)]),
                      workspace=workspace, permissions=PermissionPolicy.from_flags(allow=["*"]),
                      limits=CallLimits(memory_mb=77))
    compiled = agent.graph().compile()
    out = compiled.invoke({"task": "t"})
    compiled.close()
    return [m.content for m in out["messages"] if m.type == "tool"]


def test_every_tool_call_of_an_agent_runs_under_its_limits(tmp_path):
    shown = limits_shown(tmp_path, 1)
    assert len(shown) == 1 and '"memory_mb": 77' in shown[0]
    assert call_limits() == CallLimits()


def test_a_step_of_several_calls_sets_its_limits_once_and_every_call_runs_under_them(tmp_path, monkeypatch):
    entered: list[CallLimits] = []
    monkeypatch.setattr(agent_module, "limited", lambda limits: entered.append(limits) or limited(limits))
    shown = limits_shown(tmp_path, 5)
    assert len(shown) == 5 and all('"memory_mb": 77' in text for text in shown)
    assert entered == [CallLimits(memory_mb=77)]  # once for the step, not once per call
    assert call_limits() == CallLimits()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs Linux /proc")
def test_a_forked_child_limits_its_address_space_on_top_of_what_status_says_it_maps():
    from grapharc.harness.limits import _address_space, _status

    mapped = int(_status()["VmSize"].split()[0]) * 1024
    assert abs(_address_space() - mapped) <= 1 << 20  # the same count, give or take a page table's growth
