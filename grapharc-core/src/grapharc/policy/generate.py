"""A first policy written by a model, once, into ``.grapharc/generated-policy.toml``.

Policy is data, so a model may draft one: the worst case is bad rules a person
can read. The draft must parse and validate like any document, may name only
kinds from the catalog it was shown, and is written with a REVIEW THIS header;
later runs read the file as an ordinary policy. A registry is never generated.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError

GENERATED_PATH = Path(".grapharc") / "generated-policy.toml"
HEADER = """\
# REVIEW THIS: a model ({model}) drafted this policy on a first run because none was named.
# GraphARC reads it as an ordinary policy file from now on. Read every rule; to own it,
# edit it and move it (e.g. mv {path} policy.toml, then --policy policy.toml).
"""
PROMPT = """\
Write a GraphARC policy document in TOML for the node kinds below. Use exactly this shape:
version = "generated-1"
description = "<one line>"
[[rules]]
id = "<unique id>"
resource = "node" | "edge"
action = "deny" | "ask" | "allow"
kind = "<kind or *>"            # node rules
source = "<kind or *>"          # edge rules
target = "<kind or *>"          # edge rules
reason = "<why>"
Unmatched is deny, so end with allow rules for what is safe. Deny kinds that act on the world.
Reply with the TOML document only.

Kinds:
{catalog}
"""
FENCE = re.compile(r"```(?:toml)?\s*\n(.*?)```", re.S)


class PolicyGenerationError(GraphARCError):
    """A model's draft policy could not be used; nothing was written."""

    hint = "name a policy with --policy PATH, or set policy = ... in grapharc.toml"


def draft_text(reply: str) -> str:
    """The TOML in a model's reply: the first fenced block, else the whole reply."""
    fenced = FENCE.search(reply)
    return (fenced.group(1) if fenced else reply).strip() + "\n"


def generate_policy_file(path: Path, model: Any, model_name: str,
                         catalog: list[dict[str, Any]]) -> Path:
    """Ask ``model`` for a policy over ``catalog``, validate it, and write it atomically."""
    from grapharc.policy.engine import PolicyEngine
    from grapharc.policy.files import PolicyLoadError, parse_policy_text

    kinds = [{"kind": k["kind"], "description": k.get("description", "")} for k in catalog]
    reply = model.invoke(PROMPT.format(catalog=json.dumps(kinds, indent=2)))
    text = draft_text(str(getattr(reply, "content", reply)))
    try:
        engine = PolicyEngine(parse_policy_text(text.encode(), "(generated draft)"),
                              origin="(generated draft)", source="generated")
    except (PolicyLoadError, GraphARCError) as exc:
        raise PolicyGenerationError(f"the model's draft policy is unusable: {exc}") from None
    unknown = engine.unknown_kinds(k["kind"] for k in catalog)
    if unknown:
        raise PolicyGenerationError("the model's draft policy is unusable: " + "; ".join(unknown))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".toml.partial")
    partial.write_text(HEADER.format(model=model_name or "unnamed", path=GENERATED_PATH) + text)
    os.replace(partial, path)
    return path
