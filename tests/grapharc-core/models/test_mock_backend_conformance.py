"""The scripted ``mock/`` backend passes the model-backend conformance kit."""

from __future__ import annotations

from grapharc.models import get_model
from grapharc.testing.backend_kit import ModelBackendConformance


class TestMockBackend(ModelBackendConformance):
    capabilities = frozenset({"completion", "async", "streaming"})

    def make_model(self):
        return get_model("mock/conformance")
