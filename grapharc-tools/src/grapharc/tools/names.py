"""Names as the line-per-entry tools show them: one line each, whatever the file is called.

A file name may hold a newline or another control character; written as it is, it would
split a ``glob``, ``list_dir`` or ``grep`` answer into lines that look like other paths
(``a\\n/-`` would read as ``a`` and ``/-``). Control characters are shown as escapes
(``\\n``, ``\\x1b``) and a backslash is doubled, so every shown name reads back unambiguously.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"[\x00-\x1f\x7f-\x9f\\]")
_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped_name(name: str) -> str:
    """``name`` with its control characters escaped and backslashes doubled."""
    return _ESCAPED.sub(lambda found: _NAMED.get(found[0]) or f"\\x{ord(found[0]):02x}", name)
