"""Claim memory: the ``ClaimStore`` contract and the in-process store.

``grapharc.memory.claims`` defines ``Claim``, ``Provenance``, ``ClaimStore``
and ``normalise_entity``; ``grapharc.memory.inprocess`` holds the default
``InMemoryClaimStore``. Neither is imported here, so this package stays cheap.
Owned by grapharc-core; durable backends (grapharc-memory-sqlite,
grapharc-memory-ladybug) join this package as subpackages.
"""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)
