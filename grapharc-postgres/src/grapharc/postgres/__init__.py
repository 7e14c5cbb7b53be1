"""GraphARC on PostgreSQL: sessions, checkpoints and traces behind the ``postgres://`` store scheme."""

SCHEMES = ("postgres", "postgresql")
"""The store URI schemes this distribution serves (``hooks`` registers them, ``grapharc db`` accepts
them); kept here, where both import it without importing each other."""
