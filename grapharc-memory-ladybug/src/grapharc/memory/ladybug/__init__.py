"""GraphARC claim memory on LadybugDB, an embedded property-graph database with Cypher.

``grapharc.memory.ladybug.store`` holds ``LadybugMemoryStore`` and
``open_claim_store`` (the factory for ``ladybug:PATH`` URIs). Nothing is
imported here, and the store module loads LadybugDB only when a store opens,
so discovering the plugin stays cheap.
"""
