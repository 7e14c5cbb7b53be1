"""The terms retrieval indexes and matches: one tokenizer for every store and the query.

Text is NFKC-normalised and casefolded, then split into runs of letters, marks,
digits and private-use characters; everything else separates. Ideographs and
kana, written without spaces, become one term per character so 東京 matches 東京都.
Every term consists only of characters SQLite's ``unicode61`` tokenizer keeps
with ``categories 'L* N* Co M*'``, so they are the terms an FTS5 index would hold.
"""

from __future__ import annotations

import re
import unicodedata
from enum import Enum
from functools import lru_cache

_TERM_CATEGORIES = frozenset("LNM")
_SPACELESS_SCRIPTS = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA",
                      "KATAKANA")
# In ASCII the term characters are exactly the letters and digits.
_ASCII_TERM = re.compile(r"[a-z0-9]+")


class _Kind(Enum):
    SEPARATOR = 0
    TERM = 1
    SPACELESS = 2


@lru_cache(maxsize=8192)
def _kind(char: str) -> _Kind:
    category = unicodedata.category(char)
    if category[0] not in _TERM_CATEGORIES and category != "Co":
        return _Kind.SEPARATOR
    if unicodedata.name(char, "").startswith(_SPACELESS_SCRIPTS):
        return _Kind.SPACELESS
    return _Kind.TERM


def terms(text: str) -> list[str]:
    """Split ``text`` into its search terms, in order, repeats kept (they count as frequency)."""
    if text.isascii():  # NFKC leaves ASCII as it is, and casefolding it is lowercasing
        return _ASCII_TERM.findall(text.lower())
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    found: list[str] = []
    run: list[str] = []
    for char in folded:
        kind = _kind(char)
        if kind is _Kind.TERM:
            run.append(char)
            continue
        found.extend(_flush(run))
        if kind is _Kind.SPACELESS:
            found.append(char)
    found.extend(_flush(run))
    return found


def _flush(run: list[str]) -> list[str]:
    """Return the pending run as a term (or nothing) and clear it."""
    term = "".join(run)
    run.clear()
    return [term] if term else []


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, first occurrence first; a repeated word counts once."""
    return list(dict.fromkeys(terms(query)))
