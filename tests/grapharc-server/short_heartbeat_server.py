"""``grapharc serve`` with a heartbeat of ``SHORT_HEARTBEAT_SECONDS`` on its event streams, run as
its own process by the tests, so an idle stream's ping arrives while a test waits for it.

Usage: ``python short_heartbeat_server.py [grapharc serve options...]``.
"""

from __future__ import annotations

import sys

from grapharc.cli.main import run
from grapharc.server.api import streaming

SHORT_HEARTBEAT_SECONDS = 0.05

if __name__ == "__main__":
    streaming.HEARTBEAT_SECONDS = SHORT_HEARTBEAT_SECONDS  # before the routes that read it are imported
    sys.exit(run(["serve", *sys.argv[1:]]))
