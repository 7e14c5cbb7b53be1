"""The ``local`` executor passes the executor conformance kit."""

from __future__ import annotations

from grapharc.plugins import registry, resolve_factory
from grapharc.testing.executor_kit import ExecutorConformance


class TestLocalExecutor(ExecutorConformance):
    in_another_process = False

    def make_executor(self):
        entry = registry("executors")["local"]
        return resolve_factory(entry.item.factory, plugin=entry.distribution)()
