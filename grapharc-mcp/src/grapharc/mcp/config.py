"""``[mcp.servers.NAME]``: the MCP servers an agent may use, validated on read.

The table may be written in grapharc.toml, in the policy document, or given with ``--mcp-server``
flags (:mod:`grapharc.mcp.flags`); each place is a layer, read the same way, and a server name
(or tool prefix) defined in two of them is refused naming both, never one shadowing the other.

A server is started over stdio (``command``, ``args``, ``env``) or reached over streamable HTTP
(``url``, ``headers``). A secret is never written in the file: a value of ``env`` or ``headers``
may name environment variables as ``${NAME}``, filled in from this process's environment when the
server is started, and every variable so named is marked secret, so its value is redacted wherever
a run writes (:mod:`grapharc.redaction`). A bad entry is a :class:`ConfigurationError` naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from grapharc.config.values import SECONDS, Count
from grapharc.errors import ConfigurationError
from grapharc.plugins import ToolSourceLayer

TABLE = "mcp"
NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
"""A server's name: the first part of its tools' names (``NAME.tool``) and of policy rules."""
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,254})\}")
"""``${NAME}``: an environment variable's value, filled in when the server is started."""
SIDE_EFFECTS = ("read_only", "side_effecting")
DEFAULT_CONNECT_SECONDS = 20.0
DEFAULT_CALL_SECONDS = 60.0
DEFAULT_MAX_RESULT_BYTES = 1 << 20
_BYTES = Count(1024, 1 << 30)
_SERVER_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "prefix", "connect_timeout",
                          "call_timeout", "max_result_bytes", "side_effects"})
HINT = "see docs/concepts/agents.md (MCP servers as tools) for [mcp.servers.NAME]"


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server: how to reach it, what its tools are called, and its bounds.

    ``side_effects`` maps a tool's name (as the server names it) to ``read_only`` or
    ``side_effecting``: the operator's word, which overrides the tool's own annotations.
    """

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""
    connect_timeout: float = DEFAULT_CONNECT_SECONDS
    call_timeout: float = DEFAULT_CALL_SECONDS
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    side_effects: Mapping[str, str] = field(default_factory=dict)
    origin: str = field(default="", compare=False)
    """Where it was defined: grapharc.toml's path, the policy document, ``--mcp-server``."""

    @property
    def tool_prefix(self) -> str:
        """What comes before ``.tool`` in its tools' names: ``prefix`` if set, else the name."""
        return self.prefix or self.name

    def secret_names(self) -> list[str]:
        """The environment variables its ``env`` and ``headers`` name as ``${NAME}``."""
        values = [*self.env.values(), *self.headers.values()]
        return sorted({match for value in values for match in REFERENCE.findall(value)})


def _fail(key: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"[mcp.servers].{key} {problem}", hint=HINT)


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 4096 or "\x00" in value:
        raise _fail(key, "must be a non-empty string of at most 4096 characters, without NUL")
    return value


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(key, "must be a list of strings")
    return tuple(_string(f"{key}[{index}]", item) for index, item in enumerate(value))


def _table(key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _fail(key, "must be a table of strings")
    return {_string(key, name): _string(f"{key}.{name}", item) for name, item in value.items()}


def _number(key: str, parse: Any, value: Any) -> Any:
    try:
        return parse(value)
    except ValueError as exc:
        raise _fail(key, f"{exc}, got {value!r}") from None


def parse_server(name: str, entry: Any, base: Path) -> ServerConfig:
    """``[mcp.servers.NAME]`` as a :class:`ServerConfig`; relative ``cwd`` resolves against ``base``."""
    if NAME.fullmatch(name) is None:
        raise _fail(name, "is not a server name: lower-case letters, digits, - and _, starting with a letter")
    if not isinstance(entry, dict):
        raise _fail(name, "must be a table")
    unknown = sorted(set(entry) - _SERVER_KEYS)
    if unknown:
        raise _fail(f"{name}.{unknown[0]}",
                    f"is not a server setting (settings: {', '.join(sorted(_SERVER_KEYS))})")
    if ("command" in entry) == ("url" in entry):
        raise _fail(name, "needs exactly one of command (a stdio server) or url (a streamable HTTP server)")
    stdio_only, http_only = {"args", "env", "cwd"} & set(entry), {"headers"} & set(entry)
    if "url" in entry and stdio_only:
        raise _fail(f"{name}.{min(stdio_only)}", "applies to a stdio server (command), not to url")
    if "command" in entry and http_only:
        raise _fail(f"{name}.headers", "applies to a streamable HTTP server (url), not to command")
    url = _string(f"{name}.url", entry["url"]) if "url" in entry else ""
    if url and not url.startswith(("http://", "https://")):
        raise _fail(f"{name}.url", f"must be an http:// or https:// URL, got {url!r}")
    prefix = _string(f"{name}.prefix", entry["prefix"]) if "prefix" in entry else ""
    if prefix and NAME.fullmatch(prefix) is None:
        raise _fail(f"{name}.prefix", "must be lower-case letters, digits, - and _, starting with a letter")
    side_effects = _table(f"{name}.side_effects", entry.get("side_effects", {}))
    for tool, kind in side_effects.items():
        if kind not in SIDE_EFFECTS:
            raise _fail(f"{name}.side_effects.{tool}", f"must be one of {', '.join(SIDE_EFFECTS)}")
    return ServerConfig(
        name=name, transport="http" if url else "stdio",
        command=_string(f"{name}.command", entry["command"]) if "command" in entry else "",
        args=_strings(f"{name}.args", entry.get("args", [])),
        env=_table(f"{name}.env", entry.get("env", {})),
        cwd=(base / _string(f"{name}.cwd", entry["cwd"])).resolve() if "cwd" in entry else None,
        url=url, headers=_table(f"{name}.headers", entry.get("headers", {})), prefix=prefix,
        connect_timeout=_number(f"{name}.connect_timeout", SECONDS,
                                entry.get("connect_timeout", DEFAULT_CONNECT_SECONDS)),
        call_timeout=_number(f"{name}.call_timeout", SECONDS,
                             entry.get("call_timeout", DEFAULT_CALL_SECONDS)),
        max_result_bytes=_number(f"{name}.max_result_bytes", _BYTES,
                                 entry.get("max_result_bytes", DEFAULT_MAX_RESULT_BYTES)),
        side_effects=side_effects)


def parse_servers(table: Any, base: Path, origin: str = "") -> list[ServerConfig]:
    """The ``[mcp]`` table's servers, each validated and marked with ``origin``."""
    if not isinstance(table, dict):
        raise ConfigurationError("mcp must be a table ([mcp.servers.NAME])", hint=HINT)
    unknown = sorted(set(table) - {"servers"})
    if unknown:
        raise ConfigurationError(f"[mcp].{unknown[0]} is not a setting (only [mcp.servers.NAME])", hint=HINT)
    servers_table = table.get("servers", {})
    if not isinstance(servers_table, dict):
        raise ConfigurationError("mcp.servers must be a table of servers", hint=HINT)
    return [replace(parse_server(name, entry, base), origin=origin) for name, entry in servers_table.items()]


def layered_servers(layers: Iterable[ToolSourceLayer]) -> list[ServerConfig]:
    """Every layer's servers (see the module docstring): a bad entry is an error naming its layer,
    and a name or tool prefix taken twice is refused naming both servers and where each is."""
    servers: list[ServerConfig] = []
    for layer in layers:
        try:
            servers += parse_servers(dict(layer.table) if isinstance(layer.table, Mapping) else layer.table,
                                     layer.base, layer.origin)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{layer.origin}: {exc}", hint=exc.hint) from None
    names: dict[str, ServerConfig] = {}
    prefixes: dict[str, ServerConfig] = {}
    for server in servers:
        if server.name in names:
            raise ConfigurationError(f"MCP server {server.name!r} is defined twice: in "
                                     f"{names[server.name].origin} and in {server.origin}",
                                     hint="keep one of them, or give one another name")
        taken = prefixes.get(server.tool_prefix)
        if taken is not None:
            raise ConfigurationError(f"MCP server {server.name!r} ({server.origin}): its tool prefix "
                                     f"{server.tool_prefix!r} is already that of server {taken.name!r} "
                                     f"({taken.origin})", hint="give one of them another prefix")
        names[server.name] = prefixes[server.tool_prefix] = server
    return servers


def describe_servers(layers: Iterable[ToolSourceLayer]) -> list[str]:
    """One line per server the layers define, validated by :func:`layered_servers` as an agent's
    source is (nothing is started or connected): ``grapharc policy check`` prints them."""
    return [f"server {server.name}: "
            + (f"stdio {server.command}" if server.transport == "stdio" else f"http {server.url}")
            + f", its tools named {server.tool_prefix}.TOOL" for server in layered_servers(layers)]
