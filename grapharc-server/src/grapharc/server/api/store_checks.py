"""What a request to the long-term store may name: namespaces and keys; anything else is a 422
problem document naming the part of the request and what is wrong with it, before the store is asked.

A namespace is at most ``MAX_DEPTH`` labels of at most ``MAX_LABEL`` characters, none empty, none
with a period (the SDK joins a namespace with periods to send it in a URL) or a NUL; a key is 1 to
``MAX_KEY`` characters without a NUL. Filters, values and TTLs are the store's to check
(``grapharc.memory.longterm``), whose refusals the routes answer as 422 too.
"""

from __future__ import annotations

from collections.abc import Sequence

from grapharc.server.api.problems import ApiProblem
from grapharc.server.service.store_access import Namespace

MAX_DEPTH = 32
MAX_LABEL = 256
MAX_KEY = 1024


def namespace(labels: Sequence[str], where: str, *, empty: bool = False) -> Namespace:
    """``labels`` as a namespace, refused (422 naming ``where``) unless each label may be stored;
    ``empty``: no labels at all is fine (a prefix covering every namespace)."""
    if not labels and not empty:
        raise _refused(where, "has no labels", "name at least one label, e.g. [\"alice\", \"notes\"]")
    if len(labels) > MAX_DEPTH:
        raise _refused(where, f"has {len(labels)} labels, over the limit of {MAX_DEPTH}", "use fewer labels")
    for label in labels:
        wrong = _label_fault(label)
        if wrong:
            raise _refused(where, f"has the label {label[:MAX_LABEL]!r}, which {wrong}",
                           "labels are non-empty text without '.' or NUL")
    return tuple(labels)


def dotted(text: str, where: str) -> Namespace:
    """A namespace the SDK sent in a URL, its labels joined by periods."""
    return namespace(text.split("."), where)


def key(text: str, where: str = "key") -> str:
    """``text`` as an item's key (422 naming ``where`` when it cannot be one)."""
    if not text or len(text) > MAX_KEY or "\x00" in text:
        raise ApiProblem(422, f"{where} {text[:MAX_KEY]!r} is not a key: it must be 1 to {MAX_KEY} "
                              "characters without NUL", hint="name each item briefly within its namespace")
    return text


def _label_fault(label: str) -> str:
    """What keeps ``label`` from being a namespace label ('' when nothing does)."""
    if not label:
        return "is empty"
    if len(label) > MAX_LABEL:
        return f"is over {MAX_LABEL} characters"
    if "." in label:
        return "holds a period ('.')"
    if "\x00" in label:
        return "holds a NUL"
    return ""


def _refused(where: str, fault: str, hint: str) -> ApiProblem:
    return ApiProblem(422, f"{where} {fault}", hint=hint)
