"""GraphARC claim memory in one SQLite file, durable across separate processes.

``grapharc.memory.sqlite.store`` holds ``SQLiteMemoryStore`` and
``open_claim_store`` (the factory for ``sqlite:PATH`` URIs). Nothing is
imported here, so discovering the plugin stays cheap.
"""
