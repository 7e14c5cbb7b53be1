"""A ``--registry`` module that calls ``sys.exit`` on import, or a registry function that raises
``SystemExit``, is a ``RegistryError`` naming it (exit 2), not a server that ends with status 0 and
not a word: ``grapharc serve`` run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from server_process import grapharc_serve

REGISTRIES = {
    "exits_on_import": "import sys\nsys.exit(0)\n\ndef register(manager):\n    pass\n",
    "exits_when_called": "import sys\n\ndef register(manager):\n    sys.exit(0)\n",
}


@pytest.mark.parametrize(("module", "said"), [
    ("exits_on_import", "registry 'exits_on_import:register' cannot be loaded: importing it raised "
                        "SystemExit(0): it tried to end the process"),
    ("exits_when_called", "registry 'exits_when_called:register' failed: SystemExit(0): it tried to "
                          "end the process"),
], ids=["on-import", "when-called"])
def test_a_registry_calling_sys_exit_is_a_registry_error_naming_it(tmp_path: Path, module: str,
                                                                    said: str) -> None:
    (tmp_path / f"{module}.py").write_text(REGISTRIES[module])
    served = subprocess.run(
        grapharc_serve("--port", "0", "--json", "--sessions", str(tmp_path / "sessions"),
                       "--registry", f"{module}:register"),
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert served.returncode == 2, served.stderr
    error = json.loads(served.stdout)["error"]
    assert error["code"] == "RegistryError" and error["message"] == said
    assert "Traceback" not in served.stderr
