"""Parsing and resolving ``backend/model`` specs against the registered backends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grapharc._missing import install_hint
from grapharc.errors import GraphARCError
from grapharc.models.labels import tag_with_spec
from grapharc.plugins import BackendInfo, UnknownNameError, registry, resolve_factory


class ModelSpecError(GraphARCError, ValueError):
    """A model spec that cannot be read."""


class BareModelSpecError(ModelSpecError):
    """A spec with no ``backend/`` prefix: refused rather than sent somewhere by default."""


class UnknownBackendError(UnknownNameError, ModelSpecError):
    """A spec whose backend prefix no installed distribution registered."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: which backend, which model, and who registered the backend."""

    spec: str
    backend: str
    model: str
    info: BackendInfo
    distribution: str

    def describe(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "backend": self.backend,
            "model": self.model,
            "vendor": self.info.vendor,
            "capabilities": sorted(self.info.capabilities),
            "distribution": self.distribution,
            "description": self.info.description,
        }


def known_backends() -> list[str]:
    """Every registered backend prefix, sorted."""
    return sorted(registry("model_backends"))


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``backend/model``; the model part may itself contain slashes."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSpecError("a model spec must be a non-empty 'backend/model' string, "
                             f"got {spec!r}")
    backend, slash, model = spec.strip().partition("/")
    if not slash:
        known = known_backends()
        if backend in known:
            hint = f"did you mean {backend + '/<model>'!r}?"
        else:
            hint = f"write <backend>/{backend}, e.g. mock/{backend} for the free scripted model"
        raise BareModelSpecError(
            f"model spec {spec!r} names no backend; a spec is backend/model",
            hint=f"{hint}; known backends: {', '.join(known) or 'none'} (see: grapharc models)",
        )
    if not backend or not model:
        raise ModelSpecError(f"model spec {spec!r} needs both a backend and a model, "
                             "as in 'mock/scripted'")
    return backend, model


def resolve_backend(spec: str) -> ModelSpec:
    """What ``spec`` resolves to, without building a model (no network, no heavy import)."""
    backend, model = parse_spec(spec)
    entries = registry("model_backends")
    entry = entries.get(backend)
    if entry is None:
        raise UnknownBackendError("model backend", backend, sorted(entries),
                                  hint="install the distribution that provides it; real backends "
                                       f"come with grapharc-gateway: {install_hint('grapharc-gateway')}")
    return ModelSpec(spec=spec, backend=backend, model=model, info=entry.item,
                     distribution=entry.distribution)


def get_model(spec: str, **kwargs: Any) -> Any:
    """Build the LangChain chat model a spec names; ``kwargs`` go to the backend's factory.

    The model carries the spec, so its calls are recorded (and priced by a rate card) under it.
    """
    resolved = resolve_backend(spec)
    model = resolve_factory(resolved.info.factory, plugin=resolved.distribution)(resolved.model, **kwargs)
    return tag_with_spec(model, f"{resolved.backend}/{resolved.model}")
