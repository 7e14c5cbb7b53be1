"""GraphARC on PostgreSQL: sessions and checkpoints behind the ``postgres://`` store scheme."""
