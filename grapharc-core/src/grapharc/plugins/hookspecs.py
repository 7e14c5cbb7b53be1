"""The hooks a GraphARC plugin may implement; each docstring is the contract.

Hooks receive a core-supplied ``register`` callback rather than returning
values, so core knows which distribution registered what and decides
collisions itself. Every hook is called once per registry, lazily: the node
kinds hook runs the first time something asks for node kinds, not at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from grapharc.plugins.types import (
    BackendInfo,
    EmbedderInfo,
    ExecutorInfo,
    NodeKind,
    PolicySourceInfo,
    StoreInfo,
    ToolInfo,
    ToolSourceInfo,
)

if TYPE_CHECKING:
    import typer

hookspec = pluggy.HookspecMarker("grapharc")
hookimpl = pluggy.HookimplMarker("grapharc")

# The register callback each hook receives; a plugin's hook implementation annotates its
# parameter with the same alias, so what it registers is checked against what the registry takes.
RegisterNodeKind = Callable[[NodeKind], None]
RegisterBackend = Callable[[BackendInfo], None]
RegisterExecutor = Callable[[ExecutorInfo], None]
RegisterStore = Callable[[StoreInfo], None]
RegisterPolicySource = Callable[[PolicySourceInfo], None]
RegisterTool = Callable[[ToolInfo], None]
RegisterToolSource = Callable[[ToolSourceInfo], None]
RegisterEmbedder = Callable[[EmbedderInfo], None]


@hookspec
def register_node_kinds(register: RegisterNodeKind) -> None:
    """Register node kinds a planner may propose.

    Call ``register(NodeSpec(...))`` (``grapharc.planner.NodeSpec``) once per kind.
    A kind's name must be unique across all installed distributions.
    """


@hookspec
def register_model_backends(register: RegisterBackend) -> None:
    """Register model backends: ``register(BackendInfo(prefix=..., factory=..., vendor=...))``.

    A spec ``<prefix>/<model>`` resolves to ``factory(model, **kwargs)``, which
    returns a LangChain chat model. The factory should import its heavy
    dependencies itself, when called.
    """


@hookspec
def register_executors(register: RegisterExecutor) -> None:
    """Register tool executors by name: ``register(ExecutorInfo(name=..., factory=...))``.

    ``factory(**options)`` returns an object with
    ``run(tool, args, *, workspace, timeout=None)`` (see ``grapharc.harness.executors``).
    """


@hookspec
def register_stores(register: RegisterStore) -> None:
    """Register stores by URI scheme: ``register(StoreInfo(scheme=..., kinds=..., factory=...))``.

    ``kinds`` says which of claims / artifacts / checkpoints / sessions the
    scheme serves; ``factory(location, kind)`` opens a store for
    ``<scheme>:<location>``. One (scheme, kind) pair has exactly one owner.
    """


@hookspec
def register_policy_sources(register: RegisterPolicySource) -> None:
    """Register places a policy may come from: ``register(PolicySourceInfo(...))``.

    Sources are consulted in descending precedence; the first whose ``load``
    returns a policy supplies it, and its name is reported as the provenance.
    """


@hookspec
def register_tools(register: RegisterTool) -> None:
    """Register tools for the agent harness: ``register(ToolInfo(name=..., factory=...))``.

    ``factory()`` returns a ``grapharc.harness.tools.Tool`` named ``name``; its function is
    called as ``function(workspace, **arguments)`` and refuses any path outside the workspace.
    """


@hookspec
def register_tool_sources(register: RegisterToolSource) -> None:
    """Register sources of run-time tools: ``register(ToolSourceInfo(name=..., factory=...))``.

    ``name`` is the table the source is configured in (``[NAME]``, in grapharc.toml or in the policy
    document); an agent built with that table calls ``factory(layers)``, one ``ToolSourceLayer``
    per place it was found (and one for the source's flag, through ``from_flags``), and adds the
    source's tools to its registry, where a name already taken is refused, never shadowed.
    """


@hookspec
def register_embedders(register: RegisterEmbedder) -> None:
    """Register embedders by spec scheme: ``register(EmbedderInfo(scheme=..., factory=...))``.

    A spec ``<scheme>:<argument>`` (``grapharc serve --store-embedder``, ``open_long_term_store(...,
    embedder=)``) resolves to ``factory(argument)``, which returns an ``Embedder`` or raises a
    ``GraphARCError`` naming what in the argument is wrong. Nothing may be sent out of the process
    unless the spec names where; a credential is read from an environment variable the spec
    names, never written into the spec.
    """


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add CLI commands to ``app``, a ``typer.Typer`` owned by this plugin alone.

    Core merges the plugin's commands into ``grapharc``; a command name that is
    already taken is an error naming both distributions. Keep heavy imports
    inside the command functions so ``grapharc --help`` stays fast, or declare a command
    with ``grapharc.cli.lazy.lazy_command`` so its module is imported only when it runs.
    """
