"""MkDocs hook: fences whose info string carries the docs tests' attributes render as code.

The pages mark their examples for the docs tests with words after the language: the reference
pages for tests/docs/test_reference.py (```` ```toml file=policy.toml refused ````), every other
page for tests/docs/test_pages.py (```` ```sh skip="needs a model key" ````, ``checked=TEST``,
``server=REGISTRY``; a quoted value may hold spaces). Python-Markdown's fences take no such words
and would print the block as a paragraph; this keeps the language, and shows the file name (and
``refused`` where the loader must refuse the file) as the block's title. The tests' other
attributes say how a block is run, which a reader does not need, and are left out.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

OPENING = re.compile(r"^```(\w+)[ \t]+(\S[^\n]*)$", re.M)


def _title(match: re.Match[str]) -> str:
    words = shlex.split(match.group(2))
    names = [word.split("=", 1)[1] for word in words if word.startswith("file=")]
    flags = [word for word in words if "=" not in word]
    title = " ".join([*names, *(f"({flag})" for flag in flags)])
    return f'```{match.group(1)} title="{title}"' if title else f"```{match.group(1)}"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Rewrite each opening fence that carries attributes to the language and a title."""
    return OPENING.sub(_title, markdown)
