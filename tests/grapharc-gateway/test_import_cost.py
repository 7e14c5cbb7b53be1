"""The gateway's hook module, package and factories import nothing heavy: discovery stays cheap."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("langchain_core", "langchain_openai", "openai", "httpx", "langgraph")


def test_discovery_and_resolving_factories_import_no_model_library():
    probe = (
        "import sys\n"
        "import grapharc.gateway, grapharc.gateway.hooks\n"
        "from grapharc.models import resolve_backend\n"
        "from grapharc.plugins import resolve_factory\n"
        "for spec in ('openai/x', 'openrouter/a/b', 'ollama/x', 'novita/a/b', 'claude-cli/x'):\n"
        "    resolve_factory(resolve_backend(spec).info.factory, plugin='grapharc-gateway')\n"
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
