"""A separate process driving one session operation, for the kill-and-resume tests.

``python session_child.py DIR OP ARGS...`` with OP one of ``start GRAPH THREAD``,
``resume THREAD APPROVAL DECISION DECIDER``, ``recover THREAD``, ``bare-resume THREAD
APPROVAL`` (a manager with no graph registered). Prints the session as JSON, or the error
as ``{"error": code, "message": ...}`` with exit status 2. ``GRAPHARC_TEST_LEASE`` sets
the lease; ``GRAPHARC_TEST_GO`` makes it wait for that file before acting (a start line
for races); ``GRAPHARC_TEST_KILL_IN_PUT=STEP`` blocks inside SQLite while the checkpoint
of that step is being written and writes ``GRAPHARC_TEST_READY``; with it,
``GRAPHARC_TEST_HOLD_WRITES=NODE`` holds that node's saved writes until then (LangGraph saves a
node's writes in a background thread, which may run late: here it runs after the crash).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from session_graphs import register_all

from grapharc.errors import GraphARCError
from grapharc.session import SessionManager


def block_inside_checkpoint_write(saver, step: int, held: str | None) -> None:
    armed = threading.Event()
    original, original_writes = saver.put, saver.put_writes

    def put(config, checkpoint, metadata, new_versions):
        if metadata.get("step") == step:
            armed.set()
        return original(config, checkpoint, metadata, new_versions)

    def put_writes(config, writes, task_id, task_path=""):
        if held is not None and task_path.endswith(f", {held}"):
            armed.wait()
        return original_writes(config, writes, task_id, task_path)

    def progress() -> int:
        if armed.is_set():
            Path(os.environ["GRAPHARC_TEST_READY"]).write_text(str(os.getpid()))
            time.sleep(3600)
        return 0

    saver.put, saver.put_writes = put, put_writes
    saver.conn.set_progress_handler(progress, 1)


def main(directory: str, op: str, *args: str) -> int:
    manager = SessionManager(directory, lease_seconds=float(os.environ.get("GRAPHARC_TEST_LEASE", "30")))
    if op != "bare-resume":
        register_all(manager)
    if "GRAPHARC_TEST_KILL_IN_PUT" in os.environ:
        block_inside_checkpoint_write(manager.checkpointer, int(os.environ["GRAPHARC_TEST_KILL_IN_PUT"]),
                                      os.environ.get("GRAPHARC_TEST_HOLD_WRITES"))
    go = os.environ.get("GRAPHARC_TEST_GO")
    while go and not Path(go).exists():
        time.sleep(0.01)
    try:
        if op == "start":
            session = manager.start(args[0], {}, thread_id=args[1])
        elif op in ("resume", "bare-resume"):
            thread, approval, decision, decider = (*args, "approved", "anyone")[:4]
            session = manager.resume(thread, approval, decision, decider=decider)
        elif op == "recover":
            session = manager.recover(args[0])
        else:
            raise SystemExit(f"unknown op {op}")
    except GraphARCError as exc:
        print(json.dumps({"error": exc.code, "message": str(exc)}))
        return 2
    print(json.dumps(session.to_dict(time.time())))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
