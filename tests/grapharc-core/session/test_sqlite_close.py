"""Closing a SQLite store while another thread runs a statement on its connection waits for the
statement, instead of freeing the connection under it (which crashed the interpreter: a server
stopping while its run worker's thread read the run queue)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent('''
    import sys
    import threading
    import time

    from grapharc.sqlite.runs import SqliteRunStore

    store = SqliteRunStore(sys.argv[1])
    running, said = threading.Event(), []

    def pause() -> int:
        running.set()
        time.sleep(0.5)
        return 1

    def slow_statement() -> None:
        with store._db.write() as conn:
            conn.create_function("pause", 0, pause)
            conn.execute("SELECT pause() FROM runs UNION ALL SELECT pause()").fetchall()
        said.append("statement done")

    worker = threading.Thread(target=slow_statement)
    worker.start()
    running.wait()
    store.close()
    said.append("closed")
    worker.join()
    store.close()
    print(",".join(said))
''')


def test_close_waits_for_a_statement_another_thread_is_running(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "runs.db")],
                          capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "statement done,closed"


def test_a_store_used_after_close_opens_a_new_connection(tmp_path: Path) -> None:
    from grapharc.sqlite.runs import SqliteRunStore

    store = SqliteRunStore(tmp_path / "runs.db")
    store.close()
    assert store.of_thread("t") == []
    store.close()
