"""The ``governed`` assistant: the governed loop of ``grapharc plan``, run through the threads API.

``grapharc serve`` resolves the governed setup exactly as ``plan`` does (:mod:`grapharc.governed`:
flag > env > grapharc.toml > plan's built-ins) and, when some layer names a policy, registers the
loop graph on the SessionManager as the assistant ``governed``. A run on it takes
``{"goal": "..."}`` (and, optionally, the ``domain`` state to start from); the planner proposes,
the deterministic checker admits under the policy, and admitted proposals run. An ``ask`` pauses
the thread as a durable approval (the inbox shows it; a run with ``command: {resume: ...}``
decides it), and a deny is a rejected round whose audit names the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grapharc.errors import ConfigurationError
from grapharc.governed.settings import resolve_config

if TYPE_CHECKING:  # types only: serve resolves its settings before it binds, so it imports no LangGraph here,
    # nor the governed loop (its policy engine and planner) unless a policy is named
    from grapharc.governed.run import GovernedRun
    from grapharc.session.manager import SessionManager
    from grapharc.session.registries import Registrar
    from grapharc.trace.writer import TraceWriter

GOVERNED = "governed"
"""The assistant id (and graph name) of the governed loop."""


GOVERNED_ONLY = {"registry": "--kinds", "model": "--model", "tenant": "--tenant"}
"""The flags that configure nothing but the governed assistant, by setting."""


def resolve_governed(flags: Mapping[str, Any], config_path: Path | None) -> GovernedRun | None:
    """The governed setup ``flags`` and the config layers resolve, or None when no layer names a
    policy (then the server offers no governed assistant, as before). A flag that configures only
    the governed assistant, given without a policy, is refused rather than ignored."""
    config = resolve_config("plan", flags, config_path=config_path)
    if config.setting("policy") is not None:
        from grapharc.governed.run import prepare_plan

        return prepare_plan(config)
    given = [flag for name, flag in GOVERNED_ONLY.items() if flags.get(name) is not None]
    if given:
        raise ConfigurationError(f"{', '.join(given)} configure the governed assistant, which needs a "
                                 "policy, and no --policy, GRAPHARC_POLICY or grapharc.toml names one",
                                 hint="pass --policy PATH, or leave those options out")
    return None


def registrar(governed: GovernedRun, trace: TraceWriter | None) -> Registrar:
    """A registry function (like ``--registry`` names) that registers the governed loop."""

    from grapharc.governed.run import governed_loop

    def register(manager: SessionManager) -> None:
        manager.register(governed_loop(governed, trace=trace).graph(GOVERNED))

    return register


def announcement(governed: GovernedRun) -> dict[str, Any]:
    """What the startup announcement says of the governed assistant: its surface, planner and the
    policy with its provenance (the same block ``plan`` and ``run`` print)."""
    from grapharc.governed.provenance import provenance

    planner = governed.planner.name if governed.planner is not None else ""
    return {"assistant_id": GOVERNED, "registry": governed.surface.spec, "model": planner,
            **provenance(governed)}
