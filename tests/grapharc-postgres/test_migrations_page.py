"""The several-machines page lists every PostgreSQL migration as the code defines it."""

from __future__ import annotations

import re
from pathlib import Path

from grapharc.postgres.schema import MIGRATIONS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "several-machines.md"


def test_the_page_lists_each_migration_with_the_codes_words():
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", PAGE.read_text(), re.M)
    assert [(int(version), words) for version, words in rows] == [
        (version, words) for version, words, _ in MIGRATIONS]
