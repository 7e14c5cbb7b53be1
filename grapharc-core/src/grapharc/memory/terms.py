"""The terms retrieval indexes and matches: one tokenizer for every store and the query.

Text is NFKC-normalised and casefolded, then split into runs of letters, marks,
digits and private-use characters; everything else separates. Ideographs and
kana, written without spaces, become one term per character so 東京 matches 東京都.
Every term consists only of characters SQLite's ``unicode61`` tokenizer keeps
with ``categories 'L* N* Co M*'``, so terms joined by spaces reach FTS5 unchanged.
"""

from __future__ import annotations

import unicodedata

_TERM_CATEGORIES = frozenset("LNM")
_SPACELESS_SCRIPTS = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA",
                      "KATAKANA")


def _is_term_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] in _TERM_CATEGORIES or category == "Co"


def _is_spaceless(char: str) -> bool:
    return unicodedata.name(char, "").startswith(_SPACELESS_SCRIPTS)


def terms(text: str) -> list[str]:
    """Split ``text`` into its search terms, in order, repeats kept (they count as frequency)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    found: list[str] = []
    run: list[str] = []
    for char in folded:
        if not _is_term_char(char):
            found.extend(_flush(run))
        elif _is_spaceless(char):
            found.extend(_flush(run))
            found.append(char)
        else:
            run.append(char)
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
