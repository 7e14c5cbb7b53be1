"""Tenant names, compared case-insensitively: a rule for ``acme`` holds for ``ACME``.

A tenant is named in a policy rule (``tenant = "acme"``), in the ``tenant`` setting (``--tenant``,
``GRAPHARC_TENANT``, grapharc.toml), in a run's metadata, and wherever else GraphARC is told one;
each is read through ``tenant_name``, which keeps one spelling of it: NFKC-normalised and casefolded
(Unicode's caseless match, so case, full-width and other compatibility forms agree), without
surrounding whitespace. Two names that differ only so are one tenant; audit records, traces and
groups show the folded name. Compare tenants only after ``tenant_name``.
"""

from __future__ import annotations

import unicodedata


def tenant_name(name: str) -> str:
    """``name`` as GraphARC keeps and compares a tenant; ``ValueError`` if nothing is left of it."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold()).strip()
    if not folded:
        raise ValueError("a tenant name must not be empty or only whitespace")
    return folded


def tenant_or_none(name: str | None) -> str | None:
    """``tenant_name`` of ``name``, or ``None`` (no tenant) for ``None``."""
    return None if name is None else tenant_name(name)
