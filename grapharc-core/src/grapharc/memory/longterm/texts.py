"""What text search reads of an item: the strings its ``index`` names, as BM25 term counts.

``index=None`` (and the path ``"$"``) reads every string in the value, object keys
excepted; a list of paths reads those fields with LangGraph's own path syntax
(``"a.b"``, ``"items[*].text"``, ``"items[-1]"``) through ``langgraph.store.base``'s
reader; ``False`` reads nothing, so the item is found by filters only. Terms are
the memory plane's (``grapharc.memory.terms``), so an item's text splits exactly as
a claim's does, into the terms an FTS5 ``unicode61`` index would hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from langgraph.store.base import get_text_at_path, tokenize_path

from grapharc.memory.longterm.contracts import IndexFields
from grapharc.memory.terms import terms

WHOLE_VALUE = "$"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def indexed_texts(value: Mapping[str, Any], index: IndexFields) -> list[str]:
    """The texts of ``value`` that ``index`` names, in order."""
    if index is False:
        return []
    if index is None:
        return list(_strings(value))
    texts: list[str] = []
    for path in index:
        if path == WHOLE_VALUE:
            texts.extend(_strings(value))
        else:
            texts.extend(get_text_at_path(dict(value), tokenize_path(path)))
    return texts


def term_counts(value: Mapping[str, Any], index: IndexFields) -> tuple[dict[str, float], int]:
    """Each term's count in the indexed texts (BM25's term frequency) and their term count."""
    found = [term for text in indexed_texts(value, index) for term in terms(text)]
    return {term: float(count) for term, count in Counter(found).items()}, len(found)
