"""Claim memory: the ``ClaimStore`` contract, the in-process store, retrieval and context.

``grapharc.memory.claims`` defines ``Claim``, ``Provenance``, ``ClaimStore``
and ``normalise_entity``; ``grapharc.memory.inprocess`` holds the default
``InMemoryClaimStore``; ``retrieve``, ``render_context``, ``ClaimIndex`` and
``contradictions`` read any store; ``verify_claim`` checks a claim against its source;
``grapharc.memory.artifacts`` defines ``Artifact`` and ``ArtifactStore`` (versioned blobs
with provenance). Public names are exported lazily (PEP 562), so this package stays cheap;
a name a plugin provides (``SQLiteMemoryStore``, ``SQLiteArtifactStore``,
``LadybugMemoryStore``) names the distribution to install when it is missing.
Owned by grapharc-core; durable backends (grapharc-memory-sqlite,
grapharc-memory-ladybug) join this package as subpackages.
"""

from grapharc._lazy import lazy_exports

# every grapharc folder on sys.path (the plugins'); in place, so __spec__ lists them too
__path__[:] = __import__("pkgutil").extend_path(__path__, __name__)

_LAZY_EXPORTS = {
    "Claim": "grapharc.memory.claims",
    "ClaimStore": "grapharc.memory.claims",
    "Provenance": "grapharc.memory.claims",
    "ScoredClaim": "grapharc.memory.claims",
    "normalise_entity": "grapharc.memory.claims",
    "InMemoryClaimStore": "grapharc.memory.inprocess",
    "ClaimIndex": "grapharc.memory.claim_index",
    "exact_search": "grapharc.memory.bm25f",
    "Embedder": "grapharc.memory.retrieval",
    "Hit": "grapharc.memory.retrieval",
    "retrieve": "grapharc.memory.retrieval",
    "estimate_tokens": "grapharc.memory.context",
    "render_context": "grapharc.memory.context",
    "contradictions": "grapharc.memory.conflicts",
    "SQLiteMemoryStore": "grapharc.memory.sqlite.store",
    "LadybugMemoryStore": "grapharc.memory.ladybug.store",
    "Artifact": "grapharc.memory.artifacts",
    "ArtifactStore": "grapharc.memory.artifacts",
    "InMemoryArtifactStore": "grapharc.memory.inprocess_artifacts",
    "SQLiteArtifactStore": "grapharc.memory.sqlite.artifacts",
    "Verdict": "grapharc.memory.verify",
    "Verification": "grapharc.memory.verify",
    "verify_claim": "grapharc.memory.verify",
}

__all__ = list(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
