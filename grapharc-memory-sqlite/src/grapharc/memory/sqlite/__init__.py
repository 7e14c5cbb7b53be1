"""GraphARC claim memory and artifacts in one SQLite file, durable across separate processes.

``grapharc.memory.sqlite.store`` holds ``SQLiteMemoryStore`` and
``open_claim_store`` (the factory for ``sqlite:PATH`` claims);
``grapharc.memory.sqlite.artifacts`` holds ``SQLiteArtifactStore`` and
``open_artifact_store`` (``sqlite:PATH`` artifacts, in the same file). Nothing is
imported here, so discovering the plugin stays cheap.
"""
