"""Core's SQLite backend: the ``sqlite:`` scheme's checkpoints, sessions and runs stores.

Each kind of store keeps its file in one folder (``DIR/checkpoints.db``, ``DIR/sessions.db``,
``DIR/runs.db``, decided by :mod:`grapharc.sqlite.files`) or in one named file; the session and
run stores share :mod:`grapharc.sqlite.database` (WAL, a connection per thread, short
transactions) and the SQL logic of :mod:`grapharc.session.sql_store` and
:mod:`grapharc.runs.sql_store`. Registered through core's store hook like any plugin's backend.
"""
