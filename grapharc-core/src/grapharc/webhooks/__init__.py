"""Run webhooks' durable delivery state: one delivery per run created with a ``webhook`` URL.

The records (``records``), the store contract every backend keeps (``contracts``), its table
(``tables``) and the SQL logic SQLite and PostgreSQL share (``sql_store``). Sending is the
server's (``grapharc.server.webhooks``).
"""
