"""Discovery and loading: core's own loop over the ``grapharc`` entry points.

One try/except per plugin, so a plugin that fails to import, whose hook raises (``SystemExit``
included: :mod:`grapharc.plugins.foreign`), that does not support this core, or that registers a
name another distribution already holds is reported with a status and the rest keep working
(pluggy's own entry-point loader would let one broken plugin take the whole CLI down). Plugins
load core first, then by distribution name, and that order decides every name two of them claim.
Only each plugin's small hook module is imported here; registries are filled lazily, one hook at
a time, on first use.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import pluggy

from grapharc._version import __version__
from grapharc.plugins import hookspecs
from grapharc.plugins.errors import (
    DuplicateRegistrationError,
    IncompatiblePluginError,
    PluginError,
    PluginFailedError,
    UnknownPluginError,
)
from grapharc.plugins.facets import FACETS, Facet
from grapharc.plugins.foreign import FOREIGN_FAILURES, described
from grapharc.plugins.types import Registered

if TYPE_CHECKING:
    from typer.models import CommandInfo, TyperInfo

CORE_DISTRIBUTION = "grapharc-core"
CORE_HOOK_MODULE = "grapharc.core_plugin"
ENTRY_POINT_GROUP = "grapharc"
ACTIVE = frozenset({"loaded", "conflict"})
CORE_REQUIREMENT = re.compile(  # PEP 508: name, [extras], range (bare or in parentheses), ; marker
    r"^\s*grapharc[-_.]+core(?![\w.-])\s*(?:\[[^\]]*\])?\s*\(?(?P<range>[^;()]*)\)?\s*(?P<marker>;.*)?$",
    re.IGNORECASE)


@dataclass(frozen=True)
class PluginSource:
    """Where a plugin's hook module comes from, and the core versions it supports.

    ``requires`` is the version range of the distribution's own ``grapharc-core``
    dependency: its metadata is the one place a plugin declares which cores it supports
    (``None``: it declares none).
    """

    distribution: str
    version: str
    module: str
    load: Callable[[], Any]
    requires: str | None = None


@dataclass
class DistributionRecord:
    """What ``grapharc plugins`` reports for one distribution.

    ``status`` is ``loaded``, ``conflict`` (loaded, but lost a name to another
    distribution), ``failed``, ``incompatible`` or ``disabled``.
    """

    name: str
    version: str
    module: str
    status: str = "loaded"
    errors: list[str] = field(default_factory=list)
    registered: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "module": self.module,
            "status": self.status,
            "errors": list(self.errors),
            "registered": {facet: sorted(names) for facet, names in self.registered.items()},
        }


def strict_mode() -> bool:
    """``GRAPHARC_STRICT_PLUGINS=1`` raises plugin failures instead of reporting them."""
    return os.environ.get("GRAPHARC_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes"}


def load_filter() -> set[str] | None:
    """The distributions ``GRAPHARC_LOAD_PLUGINS`` allows (``None``: all; empty: none)."""
    raw = os.environ.get("GRAPHARC_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def in_load_order(sources: Iterable[PluginSource]) -> list[PluginSource]:
    """Core first, then by distribution name: the order that decides a contested name."""
    return sorted(sources, key=lambda source: (source.distribution != CORE_DISTRIBUTION,
                                               source.distribution))


def core_requirement(requirements: Iterable[str]) -> str | None:
    """The version range of the unconditional ``grapharc-core`` dependency among ``requirements``.

    Matched with one pattern rather than ``packaging.requirements``, whose marker support
    imports ``packaging.tags`` and adds tens of milliseconds to every CLI start; the range
    it returns is still checked by ``packaging.specifiers`` (an unreadable one is refused).
    """
    for line in requirements:
        match = CORE_REQUIREMENT.match(line)
        if match is not None and match["marker"] is None:
            return match["range"].strip()
    return None


def discover_sources() -> list[PluginSource]:
    """Every installed distribution's ``grapharc`` entry point, in load order.

    Each distribution's metadata is parsed once (``dist.name``, ``.version`` and ``.requires``
    would each parse it again, an email-header parse apiece on every CLI start).
    """
    from importlib_metadata import entry_points

    sources: dict[str, PluginSource] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        if dist is None:
            source = PluginSource(ep.name, "unknown", ep.value, ep.load)
        else:
            metadata = dist.metadata
            requires = metadata.get_all("Requires-Dist") or dist.requires or ()
            source = PluginSource(metadata["Name"], metadata["Version"], ep.value, ep.load,
                                  core_requirement(requires))
        sources.setdefault(source.distribution, source)
    if CORE_DISTRIBUTION not in sources:  # running from a source tree without metadata
        sources[CORE_DISTRIBUTION] = builtin_source()
    return in_load_order(sources.values())


def builtin_source() -> PluginSource:
    """Core's own built-ins, registered through the same hooks as any plugin."""
    import importlib

    return PluginSource(
        CORE_DISTRIBUTION, __version__, CORE_HOOK_MODULE,
        lambda: importlib.import_module(CORE_HOOK_MODULE),
    )


CORE_VERDICTS: dict[str, str | None] = {}
"""``supports_this_core``'s answer per declared range, as worked out in this process or restored
by the discovery cache (whose key holds this core's version), so a start that hit the cache
imports no ``packaging``."""


def supports_this_core(requires: str | None) -> str | None:
    """Return why a plugin with this ``grapharc-core`` range does not support this core, or ``None``."""
    if requires is None:
        return f"declares no supported core versions (list {CORE_DISTRIBUTION} in its dependencies)"
    if requires not in CORE_VERDICTS:
        CORE_VERDICTS[requires] = _range_verdict(requires)
    return CORE_VERDICTS[requires]


def _range_verdict(requires: str) -> str | None:
    """``supports_this_core`` for a declared range, worked out with ``packaging.specifiers``."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(requires)
    except InvalidSpecifier:
        return f"declares an unreadable {CORE_DISTRIBUTION} range {requires!r}"
    if not specifier.contains(__version__, prereleases=True):
        return f"supports {CORE_DISTRIBUTION} {requires}, but this is {CORE_DISTRIBUTION} {__version__}"
    return None


class PluginHost:
    """Loaded plugins, their status, and the registries they fill on demand."""

    def __init__(self, sources: Iterable[PluginSource], *, strict: bool = False,
                 allowed: set[str] | None = None) -> None:
        self.strict = strict
        self.manager = pluggy.PluginManager("grapharc")
        self.manager.add_hookspecs(hookspecs)
        self.records: dict[str, DistributionRecord] = {}
        self._registries: dict[str, dict[str, Registered]] = {}
        for source in in_load_order(sources):
            self._load(source, allowed)
        self.not_installed = [UnknownPluginError(name, self.records)
                              for name in sorted(set(allowed or ()) - set(self.records))]
        if self.not_installed and strict:
            raise self.not_installed[0]

    def _load(self, source: PluginSource, allowed: set[str] | None) -> None:
        name = source.distribution
        record = self.records[name] = DistributionRecord(name, source.version, source.module)
        if name != CORE_DISTRIBUTION:  # core always loads, and supports itself
            if allowed is not None and name not in allowed:
                record.status = "disabled"
                return
            reason = supports_this_core(source.requires)
            if reason is not None:
                self._report(record, "incompatible", IncompatiblePluginError(f"{name} {reason}"))
                return
        try:
            self.manager.register(source.load(), name=name)
        except FOREIGN_FAILURES as exc:
            self._report(record, "failed", PluginFailedError(
                f"{name}: could not load {source.module}: {described(exc)}"), exc)
            return
        try:
            self.manager.check_pending()
        except Exception as exc:
            self.manager.unregister(name=name)
            self._report(record, "failed", PluginFailedError(
                f"{name}: {source.module} implements an unknown hook: {exc}"), exc)

    def _report(self, record: DistributionRecord, status: str, error: PluginError,
                cause: BaseException | None = None) -> None:
        """Put a plugin's problem on its record, or raise it in strict mode (core's, always)."""
        if record.status in ACTIVE:
            record.status = status
        record.errors.append(str(error))
        if self.strict or record.name == CORE_DISTRIBUTION:
            raise error from cause

    def loaded(self) -> list[str]:
        """Names of the distributions whose hooks are active, in load order."""
        return [name for name, rec in self.records.items() if rec.status in ACTIVE]

    def registry(self, facet_name: str) -> dict[str, Registered]:
        """Fill (once) and return one registry, keyed as its facet defines."""
        if facet_name not in self._registries:
            self._registries[facet_name] = self._collect(FACETS[facet_name])
        return self._registries[facet_name]

    def commands(self) -> dict[str, Registered]:
        """Every plugin's CLI commands by name, collected once; items are Typer command/group infos."""
        if "commands" not in self._registries:
            self._registries["commands"] = self._collect_commands()
        return self._registries["commands"]

    def add_commands(self, app: Any) -> None:
        """Merge every plugin's CLI commands into ``app`` (a ``typer.Typer``)."""
        from typer.models import TyperInfo

        for entry in self.commands().values():
            target = app.registered_groups if isinstance(entry.item, TyperInfo) else app.registered_commands
            target.append(entry.item)

    def _implementations(self, hook: str) -> list[tuple[str, Callable[..., Any]]]:
        """``(distribution, function)`` for every implementation of ``hook`` by an active plugin, in
        load order; one plugin may implement a hook more than once (``specname``), each is called."""
        by_plugin: dict[str, list[Callable[..., Any]]] = {}
        for impl in getattr(self.manager.hook, hook).get_hookimpls():
            by_plugin.setdefault(impl.plugin_name, []).append(impl.function)
        return [(name, function) for name in self.loaded() for function in by_plugin.get(name, [])]

    def _collect(self, facet: Facet) -> dict[str, Registered]:
        entries: dict[str, Registered] = {}
        for distribution, function in self._implementations(facet.hook):
            staged = self._run_hook(facet, distribution, function)
            kept = [key for key, item in staged
                    if self._claim(entries, facet.label, key, distribution, item)]
            if kept:  # by registry key: a store's ``scheme:kind``, so two "sqlite" stores read apart
                names = self.records[distribution].registered.setdefault(facet.name, [])
                names.extend(dict.fromkeys(kept))
        return entries

    def _collect_commands(self) -> dict[str, Registered]:
        import typer

        entries: dict[str, Registered] = {}
        for distribution, function in self._implementations("register_commands"):
            sub = typer.Typer()
            if not self._call_hook(distribution, "register_commands", partial(function, app=sub)):
                continue
            staged: list[tuple[str, CommandInfo | TyperInfo]] = [
                (command_name(info), info) for info in sub.registered_commands
            ]
            staged += [(info.name or "", info) for info in sub.registered_groups]
            kept = [name for name, info in staged
                    if self._claim(entries, "command", name, distribution, info)]
            if kept:
                self.records[distribution].registered.setdefault("commands", []).extend(kept)
        return entries

    def _claim(self, entries: dict[str, Registered], label: str, key: str, distribution: str,
               item: Any) -> bool:
        """Register ``item`` under ``key`` unless an earlier distribution holds it (a conflict)."""
        holder = entries.get(key)
        if holder is not None:
            self._report(self.records[distribution], "conflict",
                         DuplicateRegistrationError(label, key, holder.distribution, distribution))
            return False
        entries[key] = Registered(key, distribution, item)
        return True

    def _run_hook(self, facet: Facet, distribution: str,
                  function: Callable[..., Any]) -> list[tuple[str, Any]]:
        """Call one plugin's hook with a register callback; keep its items only if it succeeds."""
        staged: list[tuple[str, Any]] = []

        def register(item: Any) -> None:
            if not facet.accepts(item):
                raise PluginError(
                    f"{distribution} registered {type(item).__name__} as a {facet.label}; "
                    f"expected {facet.expected}")
            for key in facet.keys(item):
                if any(key == seen for seen, _ in staged):
                    raise PluginError(f"{distribution} registered {facet.label} {key!r} twice")
                staged.append((key, item))

        succeeded = self._call_hook(distribution, facet.hook, partial(function, register=register))
        return staged if succeeded else []

    def _call_hook(self, distribution: str, hook: str, call: Callable[[], Any]) -> bool:
        """Run one plugin's hook; if it raises, that plugin has failed (raised in strict mode)."""
        try:
            call()
        except FOREIGN_FAILURES as exc:
            self._report(self.records[distribution], "failed", PluginFailedError(
                f"{distribution}: hook {hook} raised {described(exc)}"), exc)
            return False
        return True


def command_name(info: CommandInfo) -> str:
    """The name Typer gives a registered command (explicit, or the function's, dashed)."""
    if info.name:
        return info.name
    if info.callback is None:  # Typer's command decorator always sets one
        return ""
    return info.callback.__name__.lower().replace("_", "-")
