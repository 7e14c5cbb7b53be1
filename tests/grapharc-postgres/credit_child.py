"""One step of the credit approval demo in its own process, on a PostgreSQL store.

``python credit_child.py URI run APPLICATION THREAD`` starts the application (it pauses
for the credit desk); ``python credit_child.py URI approve THREAD`` answers its open
approval as the credit desk. Prints the session as JSON.
"""

from __future__ import annotations

import json
import sys
import time

from grapharc.examples.approval import CREDIT_DESK, GRAPH_NAME, register_credit_graph
from grapharc.session import SessionManager


def main(uri: str, op: str, *args: str) -> int:
    manager = SessionManager(uri)
    register_credit_graph(manager)
    try:
        if op == "run":
            session = manager.start(GRAPH_NAME, {"application_id": args[0]}, thread_id=args[1])
        elif op == "approve":
            (hold,) = manager.get(args[0]).holds
            session = manager.resume(args[0], hold.approval_id, "approved", decider=CREDIT_DESK)
        else:
            raise SystemExit(f"unknown op {op}")
        print(json.dumps(session.to_dict(time.time())))
    finally:
        manager.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
