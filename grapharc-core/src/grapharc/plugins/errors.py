"""Errors raised while discovering plugins or resolving what they registered."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class PluginError(GraphARCError):
    """A plugin could not be loaded or registered something malformed."""


class DuplicateRegistrationError(PluginError):
    """Two registrations claim one name; core never picks a winner silently."""

    def __init__(self, facet: str, name: str, first: str, second: str) -> None:
        where = f"both by {first}" if first == second else f"by {first} and by {second}"
        super().__init__(
            f"{facet} {name!r} is registered twice, {where}",
            hint="uninstall one of the distributions, or set GRAPHARC_LOAD_PLUGINS to choose",
        )
        self.facet, self.name, self.distributions = facet, name, (first, second)


class UnknownNameError(PluginError, LookupError):
    """A name (backend prefix, store scheme, executor, kind) that nothing registered."""

    def __init__(self, what: str, name: str, known: list[str], *, hint: str = "") -> None:
        listed = ", ".join(known) if known else "none"
        super().__init__(f"unknown {what} {name!r}; known: {listed}", hint=hint)
        self.what, self.name, self.known = what, name, known
