"""The tool contract: what a tool is, what a model is shown of it, and what reaches it.

A ``Tool`` names a module-level function, the Pydantic model of its arguments (the schema
a model is shown is derived from it, and every call's arguments are validated against it
before anything runs), its side effect (read / write / exec), whether it needs the
network, and whether calling it twice is harmless (``idempotent``). The function is called
as ``function(workspace, **arguments)``: the workspace is given by the harness, never by
the model, and the tool confines every path to it itself, whichever executor runs it.
Third parties register tools the same way, through the ``register_tools`` hook.

A tool from a run-time source (an MCP server's, see ``register_tool_sources``) is named
``SOURCE.tool``, which is how policy rules match it (``github.*``); a model is shown it as
``SOURCE__tool`` (model APIs take no dot in a function name), and either spelling finds it. Such a
tool brings its own ``executor`` (the call runs on its server, whatever executor the agent has)
and names its ``server`` on the trace.

A ``ToolRegistry`` holds the tools one agent may use, by name; a source whose tools can change
while the agent runs is ``watch``-ed, and what it adds joins the registry at ``refresh()``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from grapharc._missing import install_hint
from grapharc.errors import GraphARCError

TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}(?:\.[A-Za-z_][A-Za-z0-9_-]{0,63})?")
"""A tool's name: one word, or ``SOURCE.tool`` for a tool of a run-time source."""
MODEL_SEPARATOR = "__"
"""What stands for the dot of ``SOURCE.tool`` in the name a model is shown."""
WORKSPACE_ARGUMENT = "workspace"


class ToolDefinitionError(GraphARCError):
    """A tool declared with something the harness cannot offer a model or call safely."""


class ToolArgumentError(GraphARCError, TypeError):
    """A model's (or caller's) arguments that do not fit the tool; nothing was run."""

    hint = "call the tool with the arguments its schema describes"


class UnknownToolError(GraphARCError, LookupError):
    """A tool name that no registered tool has."""


class SideEffect(StrEnum):
    """What a call may change: nothing, files in the workspace, or anything a process can."""

    READ = "read"
    WRITE = "write"
    EXEC = "exec"


@dataclass(frozen=True)
class Tool:
    """One tool an agent may call."""

    name: str
    description: str
    args_model: type[BaseModel]
    function: Callable[..., Any]
    side_effect: SideEffect = SideEffect.READ
    needs_network: bool = False
    idempotent: bool = True
    executor: Any = None
    """What runs this tool's calls when not the agent's executor (an object with the ``Executor``
    interface of ``grapharc.harness.executors``): an MCP server's tool runs on its server."""
    server: str | None = None
    """The server the tool comes from, named on each call's trace event."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME.fullmatch(self.name):
            raise ToolDefinitionError(f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-', "
                                      "starting with a letter or '_' (a source's tool: SOURCE.tool)")
        if not (isinstance(self.args_model, type) and issubclass(self.args_model, BaseModel)):
            raise ToolDefinitionError(f"tool {self.name!r}: args_model must be a Pydantic model class")
        if WORKSPACE_ARGUMENT in self.args_model.model_fields:
            raise ToolDefinitionError(f"tool {self.name!r}: its arguments cannot include "
                                      f"{WORKSPACE_ARGUMENT!r}; the harness gives the workspace")
        if not callable(self.function):
            raise ToolDefinitionError(f"tool {self.name!r}: function is not callable")
        if not isinstance(self.side_effect, SideEffect):
            raise ToolDefinitionError(f"tool {self.name!r}: side_effect must be a SideEffect")

    @property
    def model_name(self) -> str:
        """The name a model is shown and calls (``SOURCE__tool`` for ``SOURCE.tool``)."""
        return self.name.replace(".", MODEL_SEPARATOR)

    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments a model is shown."""
        return self.args_model.model_json_schema()

    def schema(self) -> dict[str, Any]:
        """The tool as a model is shown it (the OpenAI function-calling shape LangChain takes)."""
        return {"type": "function", "function": {
            "name": self.model_name, "description": self.description, "parameters": self.parameters()}}

    def arguments(self, raw: Any) -> dict[str, Any]:
        """``raw`` validated against the args model, as the keyword arguments of a call."""
        if not isinstance(raw, Mapping) or not all(isinstance(key, str) for key in raw):
            raise ToolArgumentError(f"tool {self.name!r} takes an object of named arguments, "
                                    f"got {type(raw).__name__}")
        try:
            return self.args_model.model_validate(dict(raw)).model_dump()
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                for error in exc.errors(include_url=False)[:5])
            raise ToolArgumentError(f"tool {self.name!r}: {problems}") from None

    @property
    def import_path(self) -> str | None:
        """``module:name`` of the function if another process can import it, else None
        (a lambda, a closure, a ``functools.partial`` or a bound method)."""
        module = getattr(self.function, "__module__", None)
        qualname = getattr(self.function, "__qualname__", None)
        if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname \
                or "." in qualname or getattr(self.function, "__self__", None) is not None:
            return None
        return f"{module}:{qualname}"


class ToolRegistry:
    """The tools one agent may use, by name; two tools of one name are refused."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._by_model_name: dict[str, str] = {}
        self._watched: list[Callable[[], Iterable[Tool]]] = []
        self._step_scopes: list[Callable[[], AbstractContextManager[Any]]] = []
        for tool in tools:
            self.add(tool)

    @classmethod
    def from_plugins(cls, names: Iterable[str] | None = None) -> ToolRegistry:
        """The tools installed plugins registered (only ``names``, if given)."""
        from grapharc.plugins import registry, resolve_factory

        installed = registry("tools")
        wanted = list(installed) if names is None else list(names)
        unknown = [name for name in wanted if name not in installed]
        if unknown:
            raise UnknownToolError(f"no installed plugin registers tool(s) {', '.join(unknown)}; "
                                   f"installed: {', '.join(sorted(installed)) or 'none'}",
                                   hint=f"the seven core tools come with grapharc-tools: "
                                        f"{install_hint('grapharc-tools')}")
        tools = []
        for name in wanted:
            entry = installed[name]
            tool = resolve_factory(entry.item.factory, plugin=entry.distribution)()
            if not isinstance(tool, Tool) or tool.name != name:
                raise ToolDefinitionError(f"plugin {entry.distribution} registered tool {name!r}, whose "
                                          "factory did not return a Tool of that name")
            tools.append(tool)
        return cls(tools)

    def add(self, tool: Tool) -> None:
        """Register ``tool``; its name (and the name a model is shown) must be new here: a tool is
        never shadowed by another of the same name."""
        if not isinstance(tool, Tool):
            raise ToolDefinitionError(f"a ToolRegistry holds Tool objects, got {type(tool).__name__}")
        taken = self._tools.get(tool.name) or self._tools.get(self._by_model_name.get(tool.model_name, ""))
        if taken is not None:
            where = f" (from {taken.server})" if taken.server else ""
            raise ToolDefinitionError(f"tool {tool.name!r} is registered twice: {taken.name!r}{where} "
                                      "already has that name; it is refused, not shadowed")
        self._tools[tool.name] = tool
        self._by_model_name[tool.model_name] = tool.name

    def watch(self, source: Callable[[], Iterable[Tool]]) -> None:
        """Call ``source`` at each ``refresh()``: the tools it returns are added then (a source whose
        tools changed while the agent runs, an MCP server that announced a new tool list)."""
        self._watched.append(source)

    def refresh(self) -> list[str]:
        """Add what the watched sources offer now; each a name already taken is refused (a
        ``ToolDefinitionError`` from the source's tools is reported, not raised). The problems."""
        problems: list[str] = []
        for source in self._watched:
            for tool in source():
                try:
                    self.add(tool)
                except ToolDefinitionError as exc:
                    problems.append(str(exc))
        return problems

    def scope_steps(self, scope: Callable[[], AbstractContextManager[Any]]) -> None:
        """Enter ``scope()`` around each tools step of an agent over this registry (a source that
        keeps something for the step's calls: the MCP source runs its loop on the step's thread)."""
        self._step_scopes.append(scope)

    @contextmanager
    def step(self) -> Iterator[None]:
        """Every scope of ``scope_steps`` entered, in the order given, for one tools step."""
        with ExitStack() as stack:
            for scope in self._step_scopes:
                stack.enter_context(scope())
            yield

    def canonical(self, name: str) -> str:
        """``name`` as registered, given either spelling (``SOURCE.tool`` or ``SOURCE__tool``)."""
        return name if name in self._tools else self._by_model_name.get(name, name)

    def get(self, name: str) -> Tool:
        """The tool named ``name`` (or shown to a model as ``name``)."""
        tool = self._tools.get(self.canonical(name))
        if tool is None:
            raise UnknownToolError(f"no tool named {name!r}; tools: {', '.join(sorted(self._tools))}")
        return tool

    def names(self) -> list[str]:
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools[name] for name in self.names())

    def __len__(self) -> int:
        return len(self._tools)
