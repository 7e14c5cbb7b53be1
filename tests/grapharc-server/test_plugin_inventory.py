"""The server's plugin inventory comes from the plugin layer, never from the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from fastapi.testclient import TestClient
from grapharc.server.app import create_app
response = TestClient(create_app(), base_url="http://localhost").get("/plugins")
print(json.dumps({"status": response.status_code, "body": response.json(),
                  "cli": sorted(m for m in sys.modules if m.startswith("grapharc.cli"))}))
"""


def test_the_server_lists_every_plugin_without_importing_the_cli():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout)
    assert probe["status"] == 200 and probe["cli"] == []
    names = {d["name"]: d["status"] for d in probe["body"]["distributions"]}
    assert names["grapharc-core"] == "loaded" and names["grapharc-server"] == "loaded"
