"""The errors a webhook store raises on purpose."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class WebhookStoreError(GraphARCError):
    """A webhook store that cannot be opened, read or written."""
