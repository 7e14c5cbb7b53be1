"""What a plugin registers: small descriptions that core turns into registries.

These are plain dataclasses with no heavy imports so that a plugin's hook
module stays cheap to import. A ``factory`` may be a callable or a
``"module:attr"`` string; a string is imported only when the factory is first
called, which is how heavy dependencies wait until they are needed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from grapharc.errors import GraphARCError
from grapharc.plugins.errors import PluginFactoryError
from grapharc.plugins.foreign import FOREIGN_FAILURES, described

Factory = Callable[..., Any] | str

STORE_KINDS = frozenset({"claims", "artifacts", "checkpoints", "sessions", "runs", "traces", "assistants",
                         "crons", "items", "webhooks"})


def resolve_factory(factory: Factory, *, plugin: str) -> Callable[..., Any]:
    """Return the callable a factory names, importing its module if it is a string.

    ``plugin`` is the distribution that registered the factory: every failure names it, whatever
    its module raised on import (``SystemExit`` included), unless it is a ``GraphARCError`` of its own.
    """
    if callable(factory):
        return factory
    module_name, _, attr = factory.partition(":") if isinstance(factory, str) else ("", "", "")
    if not module_name or not attr:
        raise PluginFactoryError(f"{plugin} registered the factory {factory!r}, which is neither "
                                 "a callable nor of the form 'module:attr'")
    try:
        target: object = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except GraphARCError:
        raise
    except FOREIGN_FAILURES as exc:
        raise PluginFactoryError(f"{plugin}'s factory {factory!r} cannot be imported: "
                                 f"{described(exc)}") from exc
    if not callable(target):
        raise PluginFactoryError(f"{plugin}'s factory {factory!r} names a {type(target).__name__}, "
                                 "not something to call")
    return target


class NodeKind(Protocol):
    """A node kind as this layer sees one. The node-kinds registry takes only the planner's
    ``grapharc.planner.NodeSpec``, which this bottom layer may not import, so its shape stands in."""

    @property
    def name(self) -> str:
        """The kind's name, unique across every installed distribution."""

    @property
    def factory(self) -> Callable[..., Any]:
        """What builds the node's body."""

    @property
    def writes(self) -> Iterable[str] | Mapping[str, Any]:
        """The state fields the body may write (names, or names to types)."""


@dataclass(frozen=True)
class BackendInfo:
    """A model backend: specs ``<prefix>/<model>`` resolve to ``factory(model, **kwargs)``."""

    prefix: str
    factory: Factory
    vendor: str
    capabilities: frozenset[str] = frozenset()
    description: str = ""


@dataclass(frozen=True)
class ExecutorInfo:
    """A tool executor, selected by name (core registers ``local``); ``factory(**options)`` builds it."""

    name: str
    factory: Factory
    description: str = ""


@dataclass(frozen=True)
class StoreInfo:
    """A store for URIs ``<scheme>:<location>``: ``factory(location, kind)`` opens one.

    ``local_default`` says a bare path (no scheme) given for one of ``kinds`` means this
    scheme: how ``SessionManager(".grapharc/sessions")`` finds core's built-in stores.
    """

    scheme: str
    kinds: frozenset[str]
    factory: Factory
    description: str = ""
    local_default: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - STORE_KINDS
        if unknown or not self.kinds:
            raise ValueError(
                f"store scheme {self.scheme!r} declares kinds {sorted(self.kinds)}; "
                f"each must be one of {sorted(STORE_KINDS)}"
            )


@dataclass(frozen=True)
class PolicySourceInfo:
    """Somewhere a policy document may come from; higher precedence is consulted first.

    ``load(context)`` returns a loaded policy (or ``None`` when this source has
    nothing to say for the given context).
    """

    name: str
    precedence: int
    load: Factory
    description: str = ""


@dataclass(frozen=True)
class ToolInfo:
    """A tool the agent harness can offer a model.

    ``factory()`` returns the ``grapharc.harness.tools.Tool``: its function is called as
    ``function(workspace, **arguments)`` and confines every path it is given to that
    workspace itself, whichever executor runs it.
    """

    name: str
    factory: Factory
    description: str = ""


@dataclass(frozen=True)
class ToolSourceInfo:
    """A source of tools known only at run time (an MCP server's), configured in grapharc.toml,
    in the policy document, or with a command-line flag.

    ``name`` is the top-level table the source reads (``[mcp]``), in grapharc.toml and in a policy
    document alike: core accepts that table only when a plugin registers a source of that name.
    ``factory(layers)`` is handed one :class:`ToolSourceLayer` per place the table was found and
    returns an object with ``tools() -> list[Tool]`` (the tools to add to the agent's registry)
    and ``changed_tools() -> list[Tool]`` (tools that appeared since, asked before each model
    call), and optionally ``tool_step()``, a context manager entered around each tools step of the
    agent (the MCP source's calls run its event loop on the step's own thread meanwhile).
    ``from_flags(values)``, if given, turns the values of the source's ``grapharc agent``
    flag (``--mcp-server``) into such a table. ``check(layers)``, if given, validates the tables
    as ``factory`` would, starting and connecting nothing, and returns one line per thing they
    configure (``grapharc policy check`` prints them); a mistake raises a GraphARCError naming it.
    """

    name: str
    factory: Factory
    description: str = ""
    from_flags: Factory | None = None
    check: Factory | None = None


@dataclass(frozen=True)
class ToolSourceLayer:
    """One place a tool source's table came from: ``origin`` names it (a file, a flag) in errors,
    ``base`` is the folder relative paths in the table resolve against."""

    origin: str
    table: Mapping[str, Any]
    base: Path


@dataclass(frozen=True)
class EmbedderInfo:
    """An embedder for specs ``<scheme>:<argument>``: ``factory(argument)`` returns an object with
    ``embed(texts) -> vectors`` (``grapharc.memory.retrieval.Embedder``)."""

    scheme: str
    factory: Factory
    description: str = ""


@dataclass(frozen=True)
class Registered:
    """One registered item and the distribution that registered it."""

    name: str
    distribution: str
    item: Any = field(compare=False)
