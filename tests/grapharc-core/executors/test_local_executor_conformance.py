"""The ``local`` executor passes the executor conformance kit."""

from __future__ import annotations

from grapharc.plugins import registry, resolve_factory
from grapharc.testing.executor_kit import ExecutorConformance


class TestLocalExecutor(ExecutorConformance):
    def make_executor(self):
        return resolve_factory(registry("executors")["local"].item.factory)()
