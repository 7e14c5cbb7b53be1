"""What every demo stage shares: thread ids, the scripted-or-real model, its checkpoint store."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import uuid4

from langchain_core.messages import HumanMessage

from grapharc.errors import GraphARCError
from grapharc.runtime.budget import BudgetExceededError

SCRIPTED_LABEL = "scripted (free, deterministic)"
_INTEGER = re.compile(r"-?\d+")


class DemoInputError(GraphARCError):
    """A demo was asked for something it cannot do: a bad value, an unknown or finished thread."""


def new_thread_id(stage: str) -> str:
    """A fresh, readable thread id for one demo run."""
    return f"{stage}-{uuid4().hex[:12]}"


def thread_config(thread_id: str) -> dict[str, Any]:
    """The LangGraph config that addresses ``thread_id``."""
    return {"configurable": {"thread_id": thread_id}}


def run_to_end(graph: Any, values: dict[str, Any], config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Run ``graph`` on ``values`` in the thread ``config`` names, then close it: the state the run
    left, and whether a hard ceiling (``BudgetExceededError``) ended it, which a stage reports
    in its outcome rather than raises."""
    exhausted = False
    try:
        graph.invoke(values, config)
    except BudgetExceededError:
        exhausted = True
    finally:
        graph.close()
    return graph.get_state(config).values, exhausted


def refuse_shared_paths(**paths: Path) -> None:
    """Refuse two of a stage's outputs (``--trace``, ``--checkpoints``, ``--report-dir``) naming one
    path: one would overwrite the other."""
    seen: dict[Path, str] = {}
    for name, path in paths.items():
        where = Path(path).resolve()
        if where in seen:
            raise DemoInputError(f"--{seen[where]} and --{name.replace('_', '-')} both name {path}; "
                                 "each needs a path of its own")
        seen[where] = name.replace("_", "-")


def open_checkpoints(path: Path, *, trace: Path) -> Any:
    """The SQLite checkpoint store at ``path`` (compile() allowlists the state's classes on it).

    Refused when it is the stage's trace file too: one would overwrite the other.
    """
    refuse_shared_paths(checkpoints=path, trace=trace)
    return _checkpoint_store(path).saver()


def holds_checkpoint(path: Path, thread_id: str) -> bool:
    """Whether the SQLite checkpoint store at ``path`` has ``thread_id``; changes no file."""
    return _checkpoint_store(path).holds_thread(thread_id)


def _checkpoint_store(path: Path) -> Any:
    from grapharc.stores.uris import open_store

    return open_store(f"sqlite:{path}", kind="checkpoints")


def demo_model(spec: str | None, script: Sequence[str], *, name: str) -> Any:
    """The chat model ``spec`` names, or a scripted one replaying ``script`` (free, deterministic).

    Scripts repeat when they run out, so a longer loop than the script still gets replies.
    """
    from grapharc.models import get_model

    if spec is not None:
        return get_model(spec)
    return get_model(f"mock/{name}", responses=list(script), cycle=True)


def ask(model: Any, prompt: str) -> str:
    """One model call with one human message; the reply's text."""
    content = model.invoke([HumanMessage(prompt)]).content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def first_integer(text: str) -> int | None:
    """The first whole number written in ``text``, if any (how the loops read a model's answer)."""
    match = _INTEGER.search(text)
    return int(match.group()) if match else None


def open_memory(uri: str) -> Any:
    """The claim store ``uri`` names (``memory:``, ``sqlite:PATH``, ``ladybug:PATH``, ...)."""
    from grapharc.stores.uris import open_store

    return open_store(uri, kind="claims")
