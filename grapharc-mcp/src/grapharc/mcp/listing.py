"""What ``grapharc mcp list`` shows: each configured server, whether it connects (or why not), its
tools as the agent would be offered them, and which policy rule each tool falls under.

Each server is connected as an agent would connect it (the same connection, timeouts and schema
checks), its tools listed, and the session closed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grapharc.config import load_config
from grapharc.errors import GraphARCError
from grapharc.mcp.config import ServerConfig, configured_servers
from grapharc.mcp.source import ServerTools


def list_servers(*, config: Path | None, policy: Path | None, cwd: Path) -> dict[str, Any]:
    """The configured servers as a document (see the module docstring); the policy is ``policy``,
    else the config's ``policy`` setting. A bad config or policy file raises, a server that fails
    is reported in the document."""
    loaded = load_config({"policy": policy}, config=config, cwd=cwd)
    servers = configured_servers(loaded)
    policy_path = loaded.value("policy")
    rules = _rules(policy_path)
    return {"config": str(loaded.path) if loaded.path else "no grapharc.toml",
            "policy": str(policy_path) if policy_path else None,
            "servers": [_server_document(server, rules) for server in servers]}


def _rules(policy: Path | None) -> Any:
    """The permission rules of the policy document at ``policy`` (None: no policy given)."""
    if policy is None:
        return None
    from grapharc.policy.engine import PolicyEngine
    from grapharc.policy.files import load_policy_file

    return PolicyEngine.from_loaded(load_policy_file(policy, "flag")).permission_policy(None, None)


def _server_document(server: ServerConfig, rules: Any) -> dict[str, Any]:
    where = server.url if server.transport == "http" else " ".join([server.command, *server.args])
    document: dict[str, Any] = {"name": server.name, "transport": server.transport, "at": where,
                                "tools": [], "refused": []}
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
