"""Building wheels and clean virtualenvs for the packaging tests (tests/packaging), with uv.

Here, not in a test module, so every packaging test shares one way to run a tool, build a
wheel and make a virtualenv. The Python under test is ``GRAPHARC_PACKAGING_PYTHON`` (default:
this interpreter), so CI can repeat them under 3.12 and 3.13.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("GRAPHARC_PACKAGING_PYTHON", sys.executable)


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.fail("uv is not installed; it is part of the dev dependency group")
    return found


def run(*args: str | Path, cwd: Path | None = None, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                            timeout=600, env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} failed ({result.returncode}):\n"
                    f"{result.stdout}\n{result.stderr}")
    return result


def build_wheel(dist: str, out: Path) -> Path:
    """Build the workspace distribution ``dist``'s wheel into ``out``; return its path."""
    run(uv(), "build", "--wheel", "--package", dist, "--out-dir", out, "--quiet", cwd=ROOT)
    return next(out.glob(f"{dist.replace('-', '_')}-*.whl"))


def make_venv(tmp_path: Path, name: str, *wheel_files: Path | str) -> Path:
    """A virtualenv ``tmp_path/name`` with ``wheel_files`` (or requirements, or project folders)
    installed; their dependencies come from the package index through uv's cache."""
    venv = tmp_path / name
    run(uv(), "venv", "--quiet", "--python", PYTHON, venv)
    python = venv / "bin" / "python"
    wheels = [Path(item) for item in wheel_files if str(item).endswith(".whl")]
    run(uv(), "pip", "install", "--quiet", "--python", python,
        "--find-links", wheels[0].parent, *wheel_files)
    return venv
