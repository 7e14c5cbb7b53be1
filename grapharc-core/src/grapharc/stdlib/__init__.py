"""General-purpose node kinds that make a zero-configuration run possible.

``collect_context``, ``investigate``, ``verify`` and ``summarize`` are safe to
propose; ``apply_change`` is registered but denied by the default policy
(:data:`DENIED_BY_DEFAULT`), because it is the one that acts on the world. No
kind here is given ``run_command``.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports
from grapharc.stdlib.kinds import DEFAULT_POLICY, DENIED_BY_DEFAULT, STDLIB_WRITES, stdlib_specs

__all__ = ["DEFAULT_POLICY", "DENIED_BY_DEFAULT", "STDLIB_WRITES", "StdlibState", "stdlib_specs"]


__getattr__, __dir__ = lazy_exports(__name__, {"StdlibState": "grapharc.stdlib.kinds"})  # built on first use
