"""A ``--registry`` (node registry) module that calls ``sys.exit`` on import, or a registry
function that raises ``SystemExit``, is a ``RegistrySpecError`` naming it (exit 2), not a command
that ends with status 0 and not a word: ``grapharc plan`` run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REGISTRIES = {
    "exits_on_import": "import sys\nsys.exit(0)\n",
    "exits_when_called": ("import sys\nfrom grapharc.planner import NodeRegistry\n\n"
                          "def build() -> NodeRegistry:\n    sys.exit(0)\n"),
}


@pytest.mark.parametrize(("spec", "said"), [
    ("exits_on_import:build", "registry 'exits_on_import:build': importing 'exits_on_import' raised "
                              "SystemExit(0): it tried to end the process"),
    ("exits_when_called:build", "registry 'exits_when_called:build' names 'build' (function), which raised "
                                "SystemExit(0): it tried to end the process"),
], ids=["on-import", "when-called"])
def test_a_registry_calling_sys_exit_is_an_error_naming_it(tmp_path: Path, spec: str, said: str) -> None:
    module = spec.partition(":")[0]
    (tmp_path / f"{module}.py").write_text(REGISTRIES[module])
    planned = subprocess.run(
        [sys.executable, "-m", "grapharc", "plan", "a goal", "--registry", spec, "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert planned.returncode == 2, planned.stderr
    error = json.loads(planned.stdout)["error"]
    assert error["code"] == "RegistrySpecError" and error["message"] == said
    assert "Traceback" not in planned.stderr
