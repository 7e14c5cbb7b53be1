"""``--mcp-server NAME=SERVER``: MCP servers given on the command line, as an ``[mcp]`` table.

SERVER is read by its first character, so no value means two things:

* ``http://...`` or ``https://...``: a streamable HTTP server's URL;
* ``{...}``: a JSON object with the keys of ``[mcp.servers.NAME]`` (``env``, ``headers``, ``prefix``,
  timeouts...), where a secret is written as ``${VAR}``, never as its value;
* anything else: a stdio server's command line, split into words as a POSIX shell would (``shlex``)
  but run without a shell: the first word is the command, the rest its arguments.

The table is then validated like grapharc.toml's (:func:`grapharc.mcp.config.parse_server`); this
module only reads the flag's own syntax.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from grapharc.errors import ConfigurationError

FLAG = "--mcp-server"
EXAMPLES = (f"e.g. {FLAG} 'files=npx -y @modelcontextprotocol/server-filesystem /srv', "
            f"{FLAG} docs=https://example.com/mcp, or {FLAG} "
            "'api={\"url\": \"https://example.com/mcp\", "
            "\"headers\": {\"Authorization\": \"Bearer ${API_TOKEN}\"}}'")


def _fail(value: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"{FLAG} {value!r}: {problem}", hint=EXAMPLES)


def server_entry(value: str) -> tuple[str, Any]:
    """(NAME, the ``[mcp.servers.NAME]`` entry) of one flag value (see the module docstring)."""
    name, equals, server = value.partition("=")
    if not equals or not name.strip():
        raise _fail(value, "is not NAME=SERVER")
    server = server.strip()
    if not server:
        raise _fail(value, "names no server after '='")
    if server.startswith(("http://", "https://")):
        return name, {"url": server}
    if server.startswith("{"):
        try:
            return name, json.loads(server)
        except ValueError as exc:
            raise _fail(value, f"its server is not a JSON object: {exc}") from None
    try:
        words = shlex.split(server)
    except ValueError as exc:
        raise _fail(value, f"its command line cannot be split into words: {exc}") from None
    return name, {"command": words[0], "args": words[1:]}


def table_from_flags(values: list[str]) -> dict[str, Any]:
    """The ``[mcp]`` table ``--mcp-server`` values describe; a name given twice is refused."""
    servers: dict[str, Any] = {}
    for value in values:
        name, entry = server_entry(value)
        if name in servers:
            raise _fail(value, f"server {name!r} is already given by an earlier {FLAG}")
        servers[name] = entry
    return {"servers": servers}
