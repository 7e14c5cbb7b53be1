"""Errors raised while discovering plugins or resolving what they registered.

Without ``GRAPHARC_STRICT_PLUGINS=1`` a plugin's own failure (it fails to load, does not
support this core, or loses a name to another distribution) is only reported on its
record; strict mode raises it, always naming the plugin.
"""

from __future__ import annotations

from collections.abc import Iterable

from grapharc.errors import GraphARCError


class PluginError(GraphARCError):
    """A plugin could not be loaded or registered something malformed."""


class PluginFailedError(PluginError):
    """A plugin whose hook module failed to import, implements an unknown hook, or whose hook raised."""

    hint = ("fix or uninstall the plugin, or leave it out of GRAPHARC_LOAD_PLUGINS; without "
            "GRAPHARC_STRICT_PLUGINS=1 it is reported by `grapharc plugins` and skipped")


class IncompatiblePluginError(PluginError):
    """A plugin whose ``grapharc-core`` dependency excludes this core, or that declares none."""

    hint = "install a release of the plugin that supports this grapharc-core, or uninstall it"


class DuplicateRegistrationError(PluginError):
    """Two distributions register one name: the first in load order keeps it, the other loses it."""

    def __init__(self, facet: str, name: str, kept_by: str, dropped_by: str) -> None:
        super().__init__(
            f"{facet} {name!r} is registered by both {kept_by} and {dropped_by}; "
            f"{kept_by}'s is used and {dropped_by}'s is not registered",
            hint="uninstall one of the distributions, or set GRAPHARC_LOAD_PLUGINS to choose",
        )
        self.facet, self.name, self.distributions = facet, name, (kept_by, dropped_by)


class UnknownPluginError(PluginError):
    """``GRAPHARC_LOAD_PLUGINS`` names a distribution that is not an installed plugin."""

    def __init__(self, name: str, installed: Iterable[str]) -> None:
        super().__init__(
            f"GRAPHARC_LOAD_PLUGINS names {name!r}, which is not an installed GraphARC plugin "
            f"(installed: {', '.join(installed)})",
            hint="check the spelling: names are distributions, as `grapharc plugins` lists them",
        )
        self.name = name


class PluginFactoryError(PluginError):
    """A factory a plugin registered that cannot be imported: not ``module:attr``, or not there."""

    hint = "reinstall the plugin (and its dependencies), or uninstall it"


class UnknownNameError(PluginError, LookupError):
    """A name (backend prefix, store scheme, executor, kind) that nothing registered."""

    def __init__(self, what: str, name: str, known: list[str], *, hint: str = "") -> None:
        listed = ", ".join(known) if known else "none"
        super().__init__(f"unknown {what} {name!r}; known: {listed}", hint=hint)
        self.what, self.name, self.known = what, name, known
