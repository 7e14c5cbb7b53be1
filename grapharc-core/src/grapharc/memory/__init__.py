"""Claim memory: the ``ClaimStore`` contract, the in-process store, and claim verification.

``grapharc.memory.claims`` defines ``Claim``, ``Provenance``, ``ClaimStore``
and ``normalise_entity``; ``grapharc.memory.inprocess`` holds the default
``InMemoryClaimStore``; ``grapharc.memory.verify`` holds ``verify_claim``;
``grapharc.memory.artifacts`` defines ``Artifact`` and ``ArtifactStore`` (versioned
blobs with provenance). Nothing is imported until it is used (PEP 562), so this
package stays cheap; a name a plugin provides (``SQLiteArtifactStore``) names the
distribution to install when it is missing.
Owned by grapharc-core; durable backends (grapharc-memory-sqlite,
grapharc-memory-ladybug) join this package as subpackages.
"""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "Artifact": "grapharc.memory.artifacts",
    "ArtifactStore": "grapharc.memory.artifacts",
    "InMemoryArtifactStore": "grapharc.memory.inprocess_artifacts",
    "SQLiteArtifactStore": "grapharc.memory.sqlite.artifacts",
    "Verdict": "grapharc.memory.verify",
    "Verification": "grapharc.memory.verify",
    "verify_claim": "grapharc.memory.verify",
}

__all__ = [*_LAZY_EXPORTS]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
