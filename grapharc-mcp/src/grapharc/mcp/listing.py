"""What ``grapharc mcp list`` shows: each configured server, where it was defined, whether it
connects (or why not), its tools as the agent would be offered them, and which policy rule each
tool falls under.

The servers are read as ``grapharc agent`` reads them (grapharc.toml, the policy document and
``--mcp-server`` flags, one name in one place only), each connected as an agent would connect it
(the same connection, timeouts and schema checks), its tools listed, and the session closed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grapharc.config import load_config
from grapharc.errors import GraphARCError
from grapharc.harness.setup import agent_policy, source_layers, tool_source_settings
from grapharc.mcp.config import TABLE, ServerConfig, layered_servers
from grapharc.mcp.source import ServerTools


def list_servers(*, config: Path | None, policy: Path | None, cwd: Path,
                 flags: list[str] | None = None) -> dict[str, Any]:
    """The configured servers as a document (see the module docstring); the policy is ``policy``,
    else the one the policy sources resolve (``GRAPHARC_POLICY``, the config's ``policy``). A bad
    config, policy file or flag raises, a server that fails is reported in the document."""
    loaded = load_config({"policy": policy}, config=config, cwd=cwd)
    document_policy = agent_policy(loaded)
    layers = tool_source_settings(loaded, document_policy, {TABLE: flags or []}).get(TABLE, [])
    servers = layered_servers(source_layers(layers))
    rules = _rules(document_policy)
    return {"config": str(loaded.path) if loaded.path else "no grapharc.toml",
            "policy": document_policy.origin if document_policy else None,
            "servers": [_server_document(server, rules) for server in servers]}


def _rules(policy: Any) -> Any:
    """The permission rules of the loaded policy document (None: no policy given)."""
    if policy is None:
        return None
    from grapharc.policy.engine import PolicyEngine

    return PolicyEngine.from_loaded(policy).permission_policy(None, None)


def _server_document(server: ServerConfig, rules: Any) -> dict[str, Any]:
    where = server.url if server.transport == "http" else " ".join([server.command, *server.args])
    document: dict[str, Any] = {"name": server.name, "transport": server.transport, "at": where,
                                "defined_in": server.origin, "tools": [], "refused": []}
    held = ServerTools(server)
    try:
        listing = held.connection.connect()
        held.take(listing, strict=False)
    except GraphARCError as exc:
        return {**document, "status": "failed", "error": str(exc)}
    finally:
        held.connection.close()
    for tool in held.offered.values():
        entry: dict[str, Any] = {"name": tool.name, "side_effect": tool.side_effect.value,
                                 "idempotent": tool.idempotent, "description": tool.description}
        if rules is not None:
            decided = rules.decide(tool.name)
            entry["decision"] = decided.decision.value
            entry["rule"] = decided.rule.id if decided.rule is not None else "(no rule: denied)"
        document["tools"].append(entry)
    document["refused"] = [{"tool": name, "reason": reason} for name, reason in held.refused.items()]
    return {**document, "status": "connected"}
