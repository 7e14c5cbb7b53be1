"""The benchmark tests' helper module (benchmark_runs.py, beside this file) is importable, and
``postgres_admin`` names a PostgreSQL server that may create databases (skipped without one,
failed where CI requires one: tests/required.py)."""

import os
import sys
from pathlib import Path

import psycopg
import pytest
from required import unavailable

sys.path.insert(0, str(Path(__file__).parent))

ADMIN = os.environ.get("GRAPHARC_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture
def postgres_admin() -> str:
    """The PostgreSQL URI a benchmark may create its scratch database with."""
    try:
        psycopg.connect(ADMIN, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        unavailable("GRAPHARC_REQUIRE_POSTGRES", f"no PostgreSQL answers at {ADMIN}: {exc}",
                    f"no PostgreSQL at {ADMIN}: {exc}")
    return ADMIN
