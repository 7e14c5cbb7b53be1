"""``grapharc mcp``: the Model Context Protocol commands (thin callers of the library).

``list`` shows the configured MCP servers, whether each connects, its tools and the policy rule
each tool falls under. ``serve`` offers the graphs a registry registers to MCP clients as tools
(``grapharc.mcp.serving``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from grapharc.cli.options import ConfigFile, LeaseSeconds, PolicyFile, Sessions
from grapharc.cli.output import JsonOption, emit, fail, write_json
from grapharc.errors import ExitCode, GraphARCError

mcp_app = typer.Typer(name="mcp", help="Model Context Protocol: MCP servers' tools under GraphARC's "
                                       "governance.", no_args_is_help=True)


McpServers = Annotated[list[str] | None, typer.Option(
    "--mcp-server", metavar="NAME=SERVER",
    help="An MCP server besides those of grapharc.toml and the policy document (repeatable), as "
         "grapharc agent takes it: an http(s):// URL, a JSON object with the keys of [mcp.servers.NAME] "
         "(secrets as ${VAR}), or else a command line (split as a shell splits words, run without one).")]


@mcp_app.command("list")
def list_command(
    config: ConfigFile = None,
    policy: PolicyFile = None,
    mcp_server: McpServers = None,
    as_json: JsonOption = False,
) -> None:
    """List the MCP servers an agent would use: where each is defined (grapharc.toml, the policy
    document, --mcp-server), status (connected, or failed and why), tools, policy rules.

    Exit 0 when every server connected, 1 when one failed, 2 when the configuration is wrong.
    """
    from grapharc.mcp.listing import list_servers

    try:
        document = list_servers(config=config, policy=policy, cwd=Path.cwd(), flags=mcp_server)
    except GraphARCError as exc:
        fail(exc, as_json)
    failed = any(server["status"] == "failed" for server in document["servers"])
    emit(document, as_json, render_list, ExitCode.NEGATIVE if failed else ExitCode.OK)


def render_list(document: dict[str, Any]) -> str:
    """The human view: one line per server, then one indented line per tool."""
    if not document["servers"]:
        return f"no MCP servers configured ({document['config']})"
    lines: list[str] = []
    for server in document["servers"]:
        status = f"failed: {server['error']}" if server["status"] == "failed" else server["status"]
        lines.append(f"{server['name']} ({server['transport']}, from {server['defined_in']}): {status}")
        for tool in server["tools"]:
            rule = f"  {tool['decision']} by {tool['rule']}" if "rule" in tool else ""
            lines.append(f"  {tool['name']} ({tool['side_effect']}){rule}")
        for refused in server["refused"]:
            lines.append(f"  refused: {refused['reason']}")
    return "\n".join(lines)


@mcp_app.command("serve")
def serve_command(
    registry: Annotated[list[str] | None, typer.Option(
        "--registry", metavar="MODULE:ATTR",
        help="module:attr of a function that registers graphs on the SessionManager (repeatable), as "
             "grapharc serve takes it; each graph becomes a tool named for it.")] = None,
    sessions: Sessions = None,
    lease: LeaseSeconds = 30.0,
    http: Annotated[str | None, typer.Option(
        "--http", metavar="HOST:PORT", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                                            "(no authentication; port 0 picks a free one).")] = None,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="Let --http listen off loopback, with no authentication: anyone who "
                               "reaches the address can start runs and read threads.")] = False,
    config: ConfigFile = None,
    as_json: JsonOption = False,
) -> None:
    """Serve the registered graphs as MCP tools: a tool per graph starts a governed run,
    thread_status and pending_approvals read threads. Approvals are decided elsewhere (the inbox,
    grapharc session approve). Over stdio until the client leaves, or --http until SIGTERM or Ctrl+C."""
    from grapharc.mcp.serving.serve import serve
    from grapharc.session.location import session_location

    try:
        serve(str(session_location(sessions, config=config)), registry or [], lease_seconds=lease, http=http,
              allow_remote=allow_remote,
              on_listening=lambda where: write_json(where.document()) if as_json
              else print(where.line(), file=sys.stderr, flush=True))
    except GraphARCError as exc:
        fail(exc, as_json)
