"""A thread's own metadata: what a client may set in it, how large it may grow, and how a search
matches metadata and state values.

A client keeps any JSON object on a thread (``threads.create(metadata=...)``, merged into by
``threads.update``, as on LangGraph's server). GraphARC's own keys beside it (``RESERVED``: the
thread's graph and assistant, its GraphARC status and its outcome) are the server's to say, so a
client that sets one is refused naming it rather than having its value shadowed or dropped; the
object is bounded (``MAX_METADATA_BYTES`` of JSON) so a thread row stays small.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from grapharc.server.api.problems import ApiProblem

RESERVED = ("graph_id", "assistant_id", "grapharc_status", "outcome")
"""The metadata keys GraphARC writes itself: read-only to a client."""
MAX_METADATA_BYTES = 64 * 1024
"""The most a thread's own metadata may hold, as UTF-8 JSON."""


def client_metadata(metadata: Mapping[str, Any], *, allowed: tuple[str, ...] = ()) -> dict[str, Any]:
    """``metadata`` as a client may set it: 422 naming every GraphARC key it sets (beyond ``allowed``,
    which are left out of what is returned) or saying how far over the bound it is."""
    reserved = sorted(key for key in metadata if key in RESERVED and key not in allowed)
    if reserved:
        raise ApiProblem(422, f"metadata key(s) {', '.join(reserved)} are GraphARC's and read-only",
                         hint=f"GraphARC sets {', '.join(RESERVED)} itself; choose other names")
    own = {key: value for key, value in metadata.items() if key not in RESERVED}
    check_size(own)
    return own


def check_size(metadata: Mapping[str, Any], what: str = "a thread's metadata") -> None:
    """422 if ``metadata`` (``what``: whose, and which part) is larger than ``MAX_METADATA_BYTES``
    as UTF-8 JSON (what a store keeps)."""
    text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise ApiProblem(422, f"{what} holds at most {MAX_METADATA_BYTES:,} bytes of JSON; "
                              f"this would be {size:,}",
                         hint="keep large data in the graph's state (a run's input), not in metadata")


def contains(value: Any, wanted: Any) -> bool:
    """Whether ``value`` contains ``wanted`` as PostgreSQL's JSONB ``@>`` (LangGraph's metadata and
    values filters) says: an object each of whose keys ``value`` has with a value containing its
    own, an array each of whose items some item of ``value`` contains, any other value equal (a
    number by value: 1 is 1.0, not True)."""
    if isinstance(wanted, Mapping):
        return isinstance(value, Mapping) and all(
            key in value and contains(value[key], item) for key, item in wanted.items())
    if isinstance(wanted, list):
        return isinstance(value, list) and all(any(contains(have, item) for have in value) for item in wanted)
    if isinstance(wanted, bool) or isinstance(value, bool):
        return type(value) is type(wanted) and value == wanted
    return bool(value == wanted) and not isinstance(value, Mapping | list)
