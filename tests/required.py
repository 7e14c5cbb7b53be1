"""Tests that need something outside Python (a PostgreSQL server, node, GraphARC 0.1.7...) skip
where it is missing, except where CI set their ``GRAPHARC_REQUIRE_*`` variable: there they fail,
so a CI machine that lost the thing cannot pass by skipping."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def required(variable: str) -> bool:
    """True where ``variable`` is set (to anything but 0): the tests it guards must run here."""
    return os.environ.get(variable, "") not in {"", "0"}


def unavailable(variable: str, missing: str, skip_reason: str) -> NoReturn:
    """Fail, naming ``variable`` and what is ``missing``, where it is required; else skip."""
    if required(variable):
        pytest.fail(f"{variable} is set but {missing}")
    pytest.skip(skip_reason)
