"""A graph file: a written topology (a proposal in JSON) and, optionally, the state it starts from.

``grapharc run graph.json`` admits what such a file describes exactly as the planner's proposals
are admitted; the reader refuses a directory, a huge or binary file and malformed JSON by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grapharc._files import read_user_text
from grapharc.planner.proposal import ProposalError, Subgraph, decode_json, proposal_from_data

MAX_GRAPH_BYTES = 16 * 1024 * 1024


def read_graph_file(path: Path) -> tuple[Subgraph, dict[str, Any]]:
    """A graph file's proposal and its optional ``input`` state; bad files say what and where."""
    text = read_user_text(path, what="graph file", limit=MAX_GRAPH_BYTES, error=ProposalError,
                          kind="JSON")
    data = decode_json(text, str(path))
    initial: dict[str, Any] = {}
    if isinstance(data, dict) and "input" in data:
        data = dict(data)
        initial = data.pop("input")
        if not isinstance(initial, dict):
            raise ProposalError(f"{path}: input must be an object of state values")
    return proposal_from_data(data, str(path)), initial
