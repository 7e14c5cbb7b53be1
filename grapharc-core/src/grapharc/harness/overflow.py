"""Tool output too large to hand a model whole: stored in the workspace, shown truncated.

The model gets the first ``limit`` characters and a note naming the file under
``.grapharc/tool-output/`` that holds all of it, which it can read on demand with
``read_file`` (offset / limit). The file is written atomically, named by the call's digest, so
a call answered again after a resume points at the same file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

OUTPUT_FOLDER = Path(".grapharc") / "tool-output"


def shown(text: str, *, workspace: str | Path, name: str, limit: int) -> tuple[str, str | None]:
    """(what the model is shown, the stored file's workspace-relative path or None)."""
    if len(text) <= limit:
        return text, None
    folder = Path(workspace) / OUTPUT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.txt"
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    reference = str(OUTPUT_FOLDER / target.name)
    note = (f"\n…[output truncated at {limit} of {len(text)} characters; all of it is in {reference}: "
            "read it with read_file, using offset and limit]")
    return text[:limit] + note, reference
