"""The "GraphARC as an MCP server" section of docs/concepts/agents.md: its client program prints
what the section says, and the thread it paused is paid out by ``grapharc session approve`` as the
section says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from mcp_serve_process import PATIENCE_SECONDS

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "concepts" / "agents.md"
SECTION = PAGE.read_text().split("## GraphARC as an MCP server", 1)[1].split("\n## ", 1)[0]
[PROGRAM] = re.findall(r"```python[^\n]*\n(.*?)```", SECTION, re.S)
[PRINTED] = re.findall(r"```text\n(.*?)```", SECTION, re.S)


def test_the_readme_client_prints_what_it_says_and_the_approval_pays_out(tmp_path: Path) -> None:
    scripts = str(Path(sys.executable).parent)  # where the grapharc command the program starts lives
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")]), "GRAPHARC_DEBUG": ""}
    (tmp_path / "client.py").write_text(PROGRAM)
    ran = subprocess.run([sys.executable, "client.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=PATIENCE_SECONDS, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == PRINTED

    def grapharc(*arguments: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-m", "grapharc.cli", *arguments, "--json"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=PATIENCE_SECONDS, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    [thread] = grapharc("session", "list")["sessions"]  # type: ignore[misc]
    paid = grapharc("session", "approve", thread["thread_id"], "--decider", "credit-desk")
    assert (paid["status"], paid["outcome"]) == ("completed", "released")
