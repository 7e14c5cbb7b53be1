"""Claim memory: the ``ClaimStore`` contract and the in-process store.

Owned by grapharc-core; durable backends (grapharc-memory-sqlite,
grapharc-memory-ladybug) join this package as subpackages.
"""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)
