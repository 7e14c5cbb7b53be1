"""A conformance kit for any plugin distribution: core finds it, loads it, and it registers what it says.

Subclass ``InstalledPluginConformance`` in a class pytest collects, with the distribution's
name and what it registers (facet -> names, as ``grapharc plugins --json`` shows them). It runs
on the distribution as installed (``pip install -e .`` is enough), through the same entry-point
discovery as the ``grapharc`` command, with the ``grapharc_plugins`` fixture of GraphARC's pytest
plugin.

    class TestInstalledPlugin(InstalledPluginConformance):
        distribution = "acme-echo"
        registers = {"model_backends": ["acme-echo"]}
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import ClassVar

from grapharc.plugins import PluginHost
from grapharc.plugins.facets import FACETS
from grapharc.plugins.host import discover_sources, supports_this_core


class InstalledPluginConformance:
    """The contract every plugin keeps with core, as pytest tests; set the two class attributes."""

    distribution: ClassVar[str]
    registers: ClassVar[dict[str, list[str]]]

    def filled(self, host: PluginHost) -> PluginHost:
        """``host`` with every registry filled, so each record lists all its plugin registered."""
        for facet in FACETS:
            host.registry(facet)
        host.commands()
        return host

    def test_core_finds_its_entry_point(self, grapharc_plugins: PluginHost) -> None:
        assert self.distribution in grapharc_plugins.records, (
            f"no distribution {self.distribution!r} has an entry point in the 'grapharc' group; "
            "is it installed (pip install -e .)?")

    def test_it_declares_a_core_range_that_includes_this_core(self) -> None:
        (source,) = [found for found in discover_sources() if found.distribution == self.distribution]
        assert supports_this_core(source.requires) is None, supports_this_core(source.requires)

    def test_it_loads_and_registers_exactly_what_it_says(self, grapharc_plugins: PluginHost) -> None:
        record = self.filled(grapharc_plugins).records[self.distribution]
        assert (record.status, record.errors) == ("loaded", [])
        assert {facet: sorted(names) for facet, names in record.registered.items()} == \
            {facet: sorted(names) for facet, names in self.registers.items()}

    def test_its_hook_module_leaves_the_factories_modules_unimported(
            self, grapharc_plugins: PluginHost) -> None:
        """GraphARC imports every hook module at start-up; a factory named ``module:function``
        is imported only when used, so what it imports must not be imported by the hooks."""
        host = self.filled(grapharc_plugins)
        named = [getattr(entry.item, "factory", None) or getattr(entry.item, "load", None)
                 for facet in FACETS for entry in host.registry(facet).values()
                 if entry.distribution == self.distribution]
        factories = {factory.partition(":")[0] for factory in named if isinstance(factory, str)}
        hooks = host.records[self.distribution].module
        imported = subprocess.run(  # noqa: S603 -- this interpreter, a fixed program, no shell
            [sys.executable, "-c", "import importlib, json, sys; importlib.import_module(sys.argv[1]); "
             "print(json.dumps(sorted(sys.modules)))", hooks],
            capture_output=True, text=True, check=True, timeout=120, stdin=subprocess.DEVNULL)
        assert factories.isdisjoint(json.loads(imported.stdout)), factories
