"""Discovery and loading: core's own loop over the ``grapharc`` entry points.

One try/except per plugin, so a plugin that fails to import, whose hook raises,
or that does not support this core is reported with a status and skipped while
the rest keep working (pluggy's own entry-point loader would let one broken
plugin take the whole CLI down). Only each plugin's small hook module is
imported here; registries are filled lazily, one hook at a time, on first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from grapharc._version import __version__
from grapharc.plugins import hookspecs
from grapharc.plugins.errors import DuplicateRegistrationError, PluginError
from grapharc.plugins.facets import FACETS, Facet
from grapharc.plugins.types import Registered

CORE_DISTRIBUTION = "grapharc-core"
CORE_HOOK_MODULE = "grapharc.core_plugin"
ENTRY_POINT_GROUP = "grapharc"
REQUIRES_ATTRIBUTE = "GRAPHARC_CORE_REQUIRES"


@dataclass(frozen=True)
class PluginSource:
    """Where a plugin's hook module comes from: an entry point, or an in-process object."""

    distribution: str
    version: str
    module: str
    load: Callable[[], Any]
    requires: str | None = None


@dataclass
class DistributionRecord:
    """What ``grapharc plugins`` reports for one distribution."""

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
    """``GRAPHARC_STRICT_PLUGINS=1`` re-raises plugin failures instead of reporting them."""
    return os.environ.get("GRAPHARC_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes"}


def load_filter() -> set[str] | None:
    """The distributions ``GRAPHARC_LOAD_PLUGINS`` allows (``None``: all; empty: none)."""
    raw = os.environ.get("GRAPHARC_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def discover_sources() -> list[PluginSource]:
    """Every installed distribution's ``grapharc`` entry point, core's first."""
    from importlib_metadata import entry_points

    sources: dict[str, PluginSource] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        name = dist.name if dist is not None else ep.name
        version = dist.version if dist is not None else "unknown"
        sources.setdefault(name, PluginSource(name, version, ep.value, ep.load))
    if CORE_DISTRIBUTION not in sources:  # running from a source tree without metadata
        sources[CORE_DISTRIBUTION] = builtin_source()
    core = sources.pop(CORE_DISTRIBUTION)
    return [core, *(sources[name] for name in sorted(sources))]


def builtin_source() -> PluginSource:
    """Core's own built-ins, registered through the same hooks as any plugin."""
    import importlib

    return PluginSource(
        CORE_DISTRIBUTION, __version__, CORE_HOOK_MODULE,
        lambda: importlib.import_module(CORE_HOOK_MODULE),
    )


def supports_this_core(module: ModuleType | Any, fallback: str | None = None) -> str | None:
    """Return why a plugin does not support this core, or ``None`` when it does."""
    requires = getattr(module, REQUIRES_ATTRIBUTE, fallback)
    if requires is None:
        return f"declares no supported core versions (set {REQUIRES_ATTRIBUTE} in its hook module)"
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(str(requires))
    except InvalidSpecifier:
        return f"declares an unreadable {REQUIRES_ATTRIBUTE} {requires!r}"
    if not specifier.contains(__version__, prereleases=True):
        return f"supports grapharc-core {requires}, but this is grapharc-core {__version__}"
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
        for source in sources:
            self._load(source, allowed)

    def _load(self, source: PluginSource, allowed: set[str] | None) -> None:
        record = DistributionRecord(source.distribution, source.version, source.module)
        self.records[source.distribution] = record
        if allowed is not None and source.distribution != CORE_DISTRIBUTION \
                and source.distribution not in allowed:
            record.status = "disabled"
            return
        try:
            module = source.load()
            reason = supports_this_core(module, source.requires)
            if reason is not None:
                record.status = "incompatible"
                record.errors.append(reason)
                if self.strict:
                    raise PluginError(f"{source.distribution} {reason}")
                return
            self.manager.register(module, name=source.distribution)
        except Exception as exc:
            self._fail(record, f"could not load {source.module}: {type(exc).__name__}: {exc}", exc)
            return
        try:
            self.manager.check_pending()
        except Exception as exc:
            self.manager.unregister(name=source.distribution)
            self._fail(record, f"{source.module} implements an unknown hook: {exc}", exc)

    def _fail(self, record: DistributionRecord, message: str, exc: BaseException) -> None:
        record.status = "failed"
        record.errors.append(message)
        if self.strict:
            raise exc

    def loaded(self) -> list[str]:
        """Names of the distributions whose hooks are active, in load order."""
        return [name for name, rec in self.records.items() if rec.status == "loaded"]

    def registry(self, facet_name: str) -> dict[str, Registered]:
        """Fill (once) and return one registry, keyed as its facet defines."""
        if facet_name not in self._registries:
            self._registries[facet_name] = self._collect(FACETS[facet_name])
        return self._registries[facet_name]

    def _collect(self, facet: Facet) -> dict[str, Registered]:
        entries: dict[str, Registered] = {}
        caller = getattr(self.manager.hook, facet.hook)
        by_plugin = {impl.plugin_name: impl for impl in caller.get_hookimpls()}
        for distribution in self.loaded():
            impl = by_plugin.get(distribution)
            if impl is None:
                continue
            staged = self._run_hook(facet, distribution, impl.function)
            for key, item in staged:
                if key in entries:
                    raise DuplicateRegistrationError(
                        facet.label, key, entries[key].distribution, distribution)
                entries[key] = Registered(key, distribution, item)
            if staged:
                names = self.records[distribution].registered.setdefault(facet.name, [])
                names.extend(dict.fromkeys(self._display_name(facet, item) for _, item in staged))
        return entries

    @staticmethod
    def _display_name(facet: Facet, item: Any) -> str:
        return next(iter(facet.keys(item))) if facet.name != "stores" else item.scheme

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
                    raise DuplicateRegistrationError(facet.label, key, distribution, distribution)
                staged.append((key, item))

        try:
            function(register=register)
        except DuplicateRegistrationError:
            raise
        except Exception as exc:
            self._fail(self.records[distribution],
                       f"hook {facet.hook} raised {type(exc).__name__}: {exc}", exc)
            return []
        return staged

    def add_commands(self, app: Any) -> dict[str, str]:
        """Merge every plugin's CLI commands into ``app``; return command -> distribution."""
        import typer

        owners: dict[str, str] = {}
        by_plugin = {impl.plugin_name: impl for impl in self.manager.hook.register_commands.get_hookimpls()}
        for distribution in self.loaded():
            impl = by_plugin.get(distribution)
            if impl is None:
                continue
            sub = typer.Typer()
            try:
                impl.function(app=sub)
            except Exception as exc:
                self._fail(self.records[distribution],
                           f"hook register_commands raised {type(exc).__name__}: {exc}", exc)
                continue
            names = [command_name(info) for info in sub.registered_commands]
            names += [info.name or "" for info in sub.registered_groups]
            for name in names:
                if name in owners:
                    raise DuplicateRegistrationError("command", name, owners[name], distribution)
                owners[name] = distribution
            app.registered_commands.extend(sub.registered_commands)
            app.registered_groups.extend(sub.registered_groups)
            if names:
                self.records[distribution].registered.setdefault("commands", []).extend(names)
        return owners


def command_name(info: Any) -> str:
    """The name Typer gives a registered command (explicit, or the function's, dashed)."""
    if info.name:
        return info.name
    return info.callback.__name__.lower().replace("_", "-")
