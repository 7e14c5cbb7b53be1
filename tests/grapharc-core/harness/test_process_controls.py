"""What a command can read of its agent process, before and after ``protect_agent_process``.

Each test starts a real "agent" process with a planted key in its initial environment (as an
operator's shell gives one) and a probe child of the same user that tries the agent's
``/proc/PID/environ`` and ``/proc/PID/mem``. Observed here (Linux 6.18, root): the wipe hides the
key from ``environ`` for every reader; for a non-root user, non-dumpable closes ``environ`` and
``mem`` altogether; root still opens both (it holds ``CAP_SYS_PTRACE``; ``run_command`` drops that
capability from its programs, tested in grapharc-tools).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KEY = "sk-planted-61f0b9e2d7c84a35"
CORE_SRC = Path(__file__).resolve().parents[3] / "grapharc-core" / "src"
SYSTEM_PYTHON = Path("/usr/bin/python3")
AGENT = f"""
import ctypes, json, os, subprocess, sys
PROBE = r'''
import json, os
seen = {{}}
for name in ("environ", "mem"):
    try:
        with open(f"/proc/{{os.getppid()}}/{{name}}", "rb") as handle:
            seen[name] = "{KEY}".encode() in handle.read() if name == "environ" else "open"
    except OSError as exc:
        seen[name] = exc.strerror
print(json.dumps(seen))
'''
def probe():
    return json.loads(subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                                     env={{}}).stdout)
before = probe()
from grapharc.harness.process_controls import protect_agent_process
problems = protect_agent_process()
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(json.dumps({{"before": before, "after": probe(), "problems": problems,
                  "os.environ": os.environ["OPENAI_API_KEY"],
                  "getenv": libc.getenv(b"OPENAI_API_KEY").decode()}}))
"""


def agent(python: str, *, user: int | None = None) -> dict[str, object]:
    def become() -> None:
        if user is not None:
            os.setgid(user)
            os.setuid(user)

    done = subprocess.run([python, "-c", AGENT], capture_output=True, text=True, cwd="/", timeout=120,
                          env={"OPENAI_API_KEY": KEY, "PYTHONPATH": str(CORE_SRC)}, preexec_fn=become,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_key_leaves_proc_environ_but_stays_where_the_process_reads_it():
    seen = agent(sys.executable)
    assert seen["before"]["environ"] is True and seen["problems"] == []
    assert seen["after"]["environ"] is False
    assert seen["os.environ"] == seen["getenv"] == KEY


@pytest.mark.skipif(os.geteuid() != 0 or not SYSTEM_PYTHON.exists(),
                    reason="needs root to start the agent as another user, and a python that user may run")
def test_a_command_of_the_same_non_root_user_can_open_neither_environ_nor_mem_of_a_protected_agent():
    seen = agent(str(SYSTEM_PYTHON), user=65534)
    assert seen["before"] == {"environ": True, "mem": "open"}
    assert seen["after"] == {"environ": "Permission denied", "mem": "Permission denied"}
