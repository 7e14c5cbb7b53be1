"""Building an agent from settings: the one place ``grapharc agent`` (and a server) get it from.

``AgentSettings`` say what to do and under which rules: the task, the workspace, the model
spec, a policy document and ``--allow/--ask/--deny`` globs, the executor, limits. With no
policy and no globs at all, tools that only read are allowed and every other tool is asked
for, so a first run can look around but changes nothing without a person. The settings
round-trip through JSON, so a session can rebuild the same agent in another process.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grapharc.decisions.approval import Approver
from grapharc.decisions.tool_rules import PermissionPolicy
from grapharc.errors import GraphARCError
from grapharc.harness.agent import AgentNode, Evidence
from grapharc.harness.executors import Executor
from grapharc.harness.limits import CallLimits, CallLimitsError
from grapharc.harness.tools import SideEffect, ToolRegistry
from grapharc.plugins.types import ToolSourceLayer
from grapharc.runtime.budget import Budget

if TYPE_CHECKING:
    from grapharc.config.settings import Config
    from grapharc.policy.files import LoadedPolicy


class AgentSettingsError(GraphARCError):
    """Agent settings that name something that does not exist or cannot be used."""


@dataclass(frozen=True)
class AgentSettings:
    """Everything that decides what an agent may do (see the module docstring)."""

    task: str
    workspace: str
    model: str
    policy: str | None = None
    """The policy file's path, as the policy sources resolved it."""
    policy_source: str | None = None
    """The source that supplied it (``flag``, ``env``, ``config``...), kept for its provenance."""
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    tools: tuple[str, ...] | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    max_steps: int = 20
    tool_timeout: float = 60.0
    budget: dict[str, Any] = field(default_factory=dict)
    tenant: str | None = None
    limits: dict[str, int] = field(default_factory=dict)
    """Per-call resource limits some layer set (``memory_mb``, ``processes``, ``cpu_seconds``,
    ``file_mb``; 0 lifts one); the rest are ``CallLimits``' built-in ones."""
    tool_sources: dict[str, Any] = field(default_factory=dict)
    """Run-time tool sources by name (``mcp``), each a list of ``{"origin", "table", "base"}``: the
    source's table as written in grapharc.toml, in the policy document or by its flag (a secret
    only by its variable's name), where it came from, and the folder its relative paths resolve
    against (:func:`tool_source_settings`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.task, str) or not self.task.strip():
            raise AgentSettingsError("the task is empty; say what the agent should do")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> AgentSettings:
        """Settings written by ``to_json`` (lists become tuples again)."""
        try:
            data = json.loads(text)
            names = {f.name for f in fields(cls)}
            values: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value
                                      for key, value in data.items() if key in names}
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise AgentSettingsError(f"stored agent settings cannot be read: {exc}") from None


def tool_source_settings(config: Config, policy: LoadedPolicy | None = None,
                         flags: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The ``tool_sources`` of ``AgentSettings``: each installed tool source's table from
    grapharc.toml, from the policy document, and from its flag's values (``{"mcp": [...]}``), in
    that order; the source itself refuses a name defined in two of them."""
    layers: dict[str, list[dict[str, Any]]] = {}

    def add(name: str, origin: str, table: Any, base: Path) -> None:
        layers.setdefault(name, []).append({"origin": origin, "table": table, "base": str(base)})

    if config.path is not None:
        for name, table in config.sections.items():
            add(name, str(config.path), table, config.path.parent)
    if policy is not None:
        for name, policy_layers in policy_source_layers(policy).items():
            layers.setdefault(name, []).extend(policy_layers)
    for name, values in sorted((flags or {}).items()):
        if values:
            add(name, *_flag_table(name, values), Path.cwd())
    return layers


def policy_source_layers(policy: LoadedPolicy) -> dict[str, list[dict[str, Any]]]:
    """The tables of installed tool sources (``[mcp]``) a policy document holds, as layers: the
    document is their origin, and its folder the base their relative paths resolve against."""
    from grapharc.config.settings import tool_source_names

    return {name: [{"origin": f"policy {policy.origin} ({policy.source})", "table": policy.document[name],
                    "base": str(Path(policy.origin).parent)}]
            for name in sorted(tool_source_names() & set(policy.document))}


def _flag_table(name: str, values: list[str]) -> tuple[str, Any]:
    """(the flag's name, the table its values describe), by the ``name`` source's ``from_flags``."""
    from grapharc.plugins import registry, resolve_factory

    entry = registry("tool_sources").get(name)
    if entry is None or entry.item.from_flags is None:
        raise AgentSettingsError(f"--{name}-server needs a plugin that reads the [{name}] tool source from "
                                 "flags; none is installed", hint="grapharc-mcp reads --mcp-server")
    return f"--{name}-server", resolve_factory(entry.item.from_flags, plugin=entry.distribution)(values)


def source_layers(configured: list[dict[str, Any]] | dict[str, Any]) -> list[ToolSourceLayer]:
    """A tool source's ``tool_sources`` entry as the layers its factory is handed (a session stored
    before there were layers kept one grapharc.toml table, ``{"table", "base"}``: its one layer)."""
    if isinstance(configured, dict):
        configured = [{"origin": "grapharc.toml", **configured}]
    return [ToolSourceLayer(str(layer.get("origin", "")), layer.get("table", {}),
                            Path(layer.get("base", "."))) for layer in configured]


def add_source_tools(tools: ToolRegistry, sources: dict[str, Any]) -> None:
    """Open each configured tool source and add its tools to ``tools``: a name already taken is
    refused with an error naming it, never shadowed."""
    from grapharc.plugins import registry, resolve_factory

    installed = registry("tool_sources")
    for name, configured in sorted(sources.items()):
        entry = installed.get(name)
        if entry is None:
            raise AgentSettingsError(f"no installed plugin reads the [{name}] tool source; "
                                     f"installed: {', '.join(sorted(installed)) or 'none'}",
                                     hint="grapharc-mcp reads [mcp]")
        source = resolve_factory(entry.item.factory, plugin=entry.distribution)(source_layers(configured))
        for tool in source.tools():
            tools.add(tool)
        tools.watch(source.changed_tools)
        tool_step = getattr(source, "tool_step", None)
        if tool_step is not None:
            tools.scope_steps(tool_step)


def default_permissions(tools: ToolRegistry) -> PermissionPolicy:
    """With no policy and no globs: allow what only reads, ask for everything else."""
    reads = [tool.name for tool in tools if tool.side_effect is SideEffect.READ]
    others = [tool.name for tool in tools if tool.side_effect is not SideEffect.READ]
    return PermissionPolicy.from_flags(allow=reads, ask=others, layer="default")


def open_executor(name: str, options: dict[str, Any] | None = None) -> Executor:
    """The executor a plugin registered under ``name`` (``local`` is core's), built with ``options``
    (the container executor's ``image``, say)."""
    from grapharc.plugins import registry, resolve_factory

    installed = registry("executors")
    entry = installed.get(name)
    if entry is None:
        raise AgentSettingsError(f"no executor named {name!r}; installed: {', '.join(sorted(installed))}",
                                 hint="grapharc-tools adds the sandboxed and container executors")
    executor: Executor = resolve_factory(entry.item.factory, plugin=entry.distribution)(**(options or {}))
    return executor


def tool_calling_model(spec: str, options: dict[str, Any]) -> Any:
    """The model ``spec`` names, refused unless its backend declares the ``tools`` capability
    (a backend that cannot call tools would answer without ever touching the workspace)."""
    from grapharc._missing import install_hint
    from grapharc.models import get_model, resolve_backend
    from grapharc.plugins import registry

    backend = resolve_backend(spec)
    if "tools" not in backend.info.capabilities:
        able = sorted(name for name, entry in registry("model_backends").items()
                      if "tools" in entry.item.capabilities)
        raise AgentSettingsError(f"model backend {backend.backend}/ cannot call tools, so it cannot drive "
                                 f"an agent; backends that can: {', '.join(f'{n}/' for n in able)}",
                                 hint=f"e.g. --model {able[0]}/<model>" if able else
                                 "openai/, openrouter/ and ollama/ come with grapharc-gateway; "
                                 + install_hint("grapharc-gateway"))
    return get_model(spec, **options)


def agent_policy(config: Config) -> LoadedPolicy | None:
    """The policy an agent's tool rules come from: the policy sources asked as ``plan`` asks them,
    given the resolved ``policy`` setting. An agent has no registry default and never has one
    generated (its built-in is :func:`default_permissions`), so with no setting it may have none."""
    from grapharc.policy.sources import PolicyContext, resolve_policy

    return resolve_policy(PolicyContext(configured=config.setting("policy")))


def build_agent(settings: AgentSettings, *, model: Any = None, approver: Approver | None = None,
                evidence: Evidence | None = None, name: str = "agent") -> AgentNode:
    """The AgentNode ``settings`` describe (``model`` overrides the spec, e.g. in tests)."""
    from grapharc.policy.engine import PolicyEngine
    from grapharc.policy.files import load_policy_file

    tools = ToolRegistry.from_plugins(settings.tools)
    add_source_tools(tools, settings.tool_sources)
    flagged = settings.allow or settings.ask or settings.deny
    policy = None
    if settings.policy:
        loaded = load_policy_file(Path(settings.policy), settings.policy_source or "file")
        policy = PolicyEngine.from_loaded(loaded)
    if flagged or policy is not None:
        permissions = PermissionPolicy.from_flags(allow=settings.allow, ask=settings.ask, deny=settings.deny)
    else:
        permissions = default_permissions(tools)
    try:
        limits = CallLimits.from_settings(settings.limits)
    except CallLimitsError as exc:
        raise AgentSettingsError(str(exc)) from None
    chosen = model if model is not None else tool_calling_model(settings.model, settings.model_options)
    executor = open_executor(settings.executor, settings.executor_options)
    return AgentNode(chosen, tools,
                     workspace=settings.workspace, permissions=permissions, policy=policy,
                     tenant=settings.tenant, executor=executor, approver=approver,
                     evidence=evidence, max_steps=settings.max_steps, tool_timeout=settings.tool_timeout,
                     budget=Budget(**settings.budget), name=name, limits=limits)
