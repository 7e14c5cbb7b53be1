"""MkDocs hook: fences whose info string carries the docs tests' attributes render as code.

The reference pages mark their examples for tests/docs/test_reference.py with words after the
language (```` ```toml file=policy.toml refused ````). Python-Markdown's fences take no such
words and would print the block as a paragraph; this keeps the language, and shows the file name
(and ``refused`` where the loader must refuse the file) as the block's title.
"""

from __future__ import annotations

import re
from typing import Any

OPENING = re.compile(r"^```(\w+)[ \t]+(\S[^\n]*)$", re.M)


def _title(match: re.Match[str]) -> str:
    words = match.group(2).split()
    names = [word.split("=", 1)[1] for word in words if word.startswith("file=")]
    flags = [word for word in words if "=" not in word]
    title = " ".join([*names, *(f"({flag})" for flag in flags)])
    return f'```{match.group(1)} title="{title}"' if title else f"```{match.group(1)}"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Rewrite each opening fence that carries attributes to the language and a title."""
    return OPENING.sub(_title, markdown)
