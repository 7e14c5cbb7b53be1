"""GraphARC: a governed agent runtime on LangGraph.

This package is owned by grapharc-core. Plugin distributions add subpackages
(``grapharc.gateway``, ``grapharc.tools``, ...) by shipping only their own leaf
folder, so the path is extended to every ``grapharc`` directory on ``sys.path``.
Public names are exported lazily (PEP 562) so ``import grapharc.gateway`` and
``grapharc --help`` stay cheap; a type checker is shown the same names imported for real.
"""

from typing import TYPE_CHECKING

from grapharc._lazy import lazy_exports
from grapharc._missing import install_missing_plugin_hint as _install_hint
from grapharc._version import __version__

# every grapharc folder on sys.path (the plugins'); in place, so __spec__ lists them too
__path__[:] = __import__("pkgutil").extend_path(__path__, __name__)

_install_hint()

_LAZY_EXPORTS = {
    "GraphARC": "grapharc.runtime.graph",
    "StateGraph": "grapharc.runtime.graph",
    "GraphARCState": "grapharc.runtime.state",
    "Budget": "grapharc.runtime.budget",
}

__all__ = ["__version__", *_LAZY_EXPORTS]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)

if TYPE_CHECKING:  # what a type checker sees: the real classes, not the lazy __getattr__'s Any
    from grapharc.runtime.budget import Budget as Budget
    from grapharc.runtime.graph import GraphARC as GraphARC
    from grapharc.runtime.graph import StateGraph as StateGraph
    from grapharc.runtime.state import GraphARCState as GraphARCState
