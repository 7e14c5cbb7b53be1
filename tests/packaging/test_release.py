"""What ``make release`` publishes: every distribution's sdist and wheel carries its LICENSE, its own
README and the metadata an index shows (classifiers, Requires-Python, project URLs, the shared
version), and ``twine check`` passes on each.

Marked ``packaging``: it builds sixteen artifacts (about half a minute).
"""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

import pytest

import grapharc

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = sorted(path.parent.name for path in ROOT.glob("grapharc-*/pyproject.toml"))
PROJECT_URLS = {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed; it is part of the dev dependency group")
    return found


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for name in DISTRIBUTIONS:
        subprocess.run([tool("uv"), "build", "--quiet", "--package", name, "--out-dir", str(out)],
                       cwd=ROOT, check=True, capture_output=True, timeout=600)
    return out


def artifact_files(path: Path) -> dict[str, bytes]:
    """Each file of a wheel or an sdist by its path inside the artifact (an sdist's top folder cut)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return {name: wheel.read(name) for name in wheel.namelist()}
    with tarfile.open(path) as sdist:
        return {member.name.split("/", 1)[1]: sdist.extractfile(member).read()  # type: ignore[union-attr]
                for member in sdist.getmembers() if member.isfile()}


def metadata(files: dict[str, bytes]) -> Message:
    """The core metadata: a wheel's METADATA, an sdist's PKG-INFO."""
    name = next(n for n in files if n == "PKG-INFO" or n.endswith(".dist-info/METADATA"))
    return email.parser.BytesParser().parsebytes(files[name])


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_each_artifact_carries_its_license_readme_and_metadata(dist: Path, name: str, kind: str):
    stem = f"{name.replace('-', '_')}-{grapharc.__version__}"
    path = dist / (f"{stem}-py3-none-any.whl" if kind == "wheel" else f"{stem}.tar.gz")
    files = artifact_files(path)
    meta = metadata(files)
    own_readme = (ROOT / name / "README.md").read_text()

    assert (ROOT / "LICENSE").read_bytes() in {files.get("LICENSE"),
                                                files.get(f"{stem}.dist-info/licenses/LICENSE")}
    assert meta["Name"] == name and meta["Version"] == grapharc.__version__
    assert meta["License-Expression"] == "MIT" and meta["Requires-Python"] == ">=3.11"
    assert meta.get_payload().strip() == own_readme.strip()
    assert own_readme.startswith(f"# {name}\n")
    assert "Programming Language :: Python :: 3.11" in meta.get_all("Classifier", [])
    assert {url.split(",")[0] for url in meta.get_all("Project-URL", [])} == PROJECT_URLS
    if name != "grapharc-core":
        assert f"grapharc-core=={grapharc.__version__}" in meta.get_all("Requires-Dist", [])


def test_twine_check_passes_on_every_artifact(dist: Path):
    artifacts = sorted([*dist.glob("*.whl"), *dist.glob("*.tar.gz")])
    assert len(artifacts) == 2 * len(DISTRIBUTIONS)
    checked = subprocess.run([tool("twine"), "check", "--strict", *map(str, artifacts)],
                             capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout + checked.stderr
