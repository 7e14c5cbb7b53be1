"""GraphARC on PostgreSQL: sessions, checkpoints and traces behind the ``postgres://`` store scheme."""
