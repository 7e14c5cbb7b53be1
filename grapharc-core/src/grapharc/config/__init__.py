"""Configuration: every setting resolved flag > env (``GRAPHARC_*``) > grapharc.toml > built-in.

:mod:`grapharc.config.settings` resolves the settings and records which layer supplied each;
:mod:`grapharc.config.values` defines the kinds of number a user gives and their ranges, which
flags and the file share; :mod:`grapharc.config.tenants` the one spelling a tenant is kept and
compared in (case-insensitive). Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **{name: "grapharc.config.settings" for name in (
        "CONFIG_NAME", "DEFAULTS", "ENV_PREFIX", "KEYS", "LAYERS", "Config", "Key", "Setting", "find_config",
        "load_config", "locate_store", "read_config_file")},
    **{name: "grapharc.config.tenants" for name in ("tenant_name", "tenant_or_none")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
