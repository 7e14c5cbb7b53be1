"""The hooks a GraphARC plugin may implement; each docstring is the contract.

Hooks receive a core-supplied ``register`` callback rather than returning
values, so core knows which distribution registered what and decides
collisions itself. Every hook is called once per registry, lazily: the node
kinds hook runs the first time something asks for node kinds, not at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable

hookspec = pluggy.HookspecMarker("grapharc")
hookimpl = pluggy.HookimplMarker("grapharc")


@hookspec
def register_node_kinds(register: Callable[[Any], None]) -> None:
    """Register node kinds a planner may propose.

    Call ``register(NodeSpec(...))`` (``grapharc.planner.NodeSpec``) once per kind.
    A kind's name must be unique across all installed distributions.
    """


@hookspec
def register_model_backends(register: Callable[[Any], None]) -> None:
    """Register model backends: ``register(BackendInfo(prefix=..., factory=..., vendor=...))``.

    A spec ``<prefix>/<model>`` resolves to ``factory(model, **kwargs)``, which
    returns a LangChain chat model. The factory should import its heavy
    dependencies itself, when called.
    """


@hookspec
def register_executors(register: Callable[[Any], None]) -> None:
    """Register tool executors by name: ``register(ExecutorInfo(name=..., factory=...))``.

    ``factory(**options)`` returns an object with ``run(tool, args)``.
    """


@hookspec
def register_stores(register: Callable[[Any], None]) -> None:
    """Register stores by URI scheme: ``register(StoreInfo(scheme=..., kinds=..., factory=...))``.

    ``kinds`` says which of claims / artifacts / checkpoints / sessions the
    scheme serves; ``factory(location, kind)`` opens a store for
    ``<scheme>:<location>``. One (scheme, kind) pair has exactly one owner.
    """


@hookspec
def register_policy_sources(register: Callable[[Any], None]) -> None:
    """Register places a policy may come from: ``register(PolicySourceInfo(...))``.

    Sources are consulted in descending precedence; the first whose ``load``
    returns a policy supplies it, and its name is reported as the provenance.
    """


@hookspec
def register_tools(register: Callable[[Any], None]) -> None:
    """Register tools for the agent harness: ``register(ToolInfo(name=..., factory=...))``.

    ``factory(workspace)`` returns the tool for that workspace directory: a callable
    taking keyword arguments that refuses any path outside the workspace itself.
    """


@hookspec
def register_commands(app: Any) -> None:
    """Add CLI commands to ``app``, a ``typer.Typer`` owned by this plugin alone.

    Core merges the plugin's commands into ``grapharc``; a command name that is
    already taken is an error naming both distributions. Keep heavy imports
    inside the command functions so ``grapharc --help`` stays fast.
    """
