"""Every kind ``grapharc plugin new`` writes installs beside the core-only wheel and passes its own tests.

Marked ``packaging``. The core wheel's own ``grapharc plugin new`` writes the skeletons (so the
templates ship in the wheel); one virtualenv holds that wheel, pytest and the five skeletons
(built from their folders by uv, dependencies from uv's cache), so each skeleton's tests also run
with the four others installed: their names never collide. The five test folders run in one
pytest process, as each project's own ``pytest`` would, to pay for one interpreter start, not five.
One skeleton is also built as it would be published (sdist and wheel), as the tutorial does.
"""

from __future__ import annotations

import json
import tarfile
import zipfile
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest
from wheel_venvs import build_wheel, make_venv, run, uv

from grapharc.plugins.skeleton import KINDS

pytestmark = pytest.mark.packaging

REGISTERED = {"backend": {"model_backends": ["acme-backend"]},
              "store": {"stores": ["acme-store:artifacts"]},
              "executor": {"executors": ["acme-executor"]},
              "tools": {"tools": ["acme_tools_word_count"]},
              "kind": {"node_kinds": ["acme_kind"]}}


WRITE_EACH_KIND = ("import sys; from grapharc.cli.main import run; sys.exit(max("
                   "run(['plugin', 'new', f'acme-{kind}', '--kind', kind]) for kind in sys.argv[1:]))")
"""``grapharc plugin new acme-KIND --kind KIND`` for each kind given, through the command's own entry
point (``grapharc.cli.main.run``) in one process rather than five."""


@pytest.fixture(scope="module")
def skeletons(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder of one skeleton per kind, written by the core wheel's own ``grapharc plugin new`` (so
    the templates ship in it), and the virtualenv they are installed in beside that wheel."""
    folder = tmp_path_factory.mktemp("skeletons")
    core = build_wheel("grapharc-core", tmp_path_factory.mktemp("wheels"))
    venv = make_venv(folder, "venv", core, "pytest")
    run(venv / "bin" / "python", "-c", WRITE_EACH_KIND, *KINDS, cwd=folder)
    run(uv(), "pip", "install", "--quiet", "--python", venv / "bin" / "python", "--find-links", core.parent,
        *(folder / f"acme-{kind}" for kind in KINDS))
    return folder, venv


def test_every_skeleton_is_loaded_beside_the_core_wheel_and_registers_its_name(skeletons):
    venv = skeletons[1]
    listed = json.loads(run(venv / "bin" / "grapharc", "plugins", "--json").stdout)["distributions"]
    found = {entry["name"]: (entry["status"], entry["registered"]) for entry in listed}
    assert found == {"grapharc-core": found["grapharc-core"],
                     **{f"acme-{kind}": ("loaded", names) for kind, names in REGISTERED.items()}}


def test_every_skeletons_own_tests_pass_there(skeletons):
    folder, venv = skeletons
    report = folder / "report.xml"
    result = run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                 "--rootdir", folder, f"--junitxml={report}",
                 *(folder / f"acme-{kind}" / "tests" for kind in KINDS), cwd=folder, check=False)
    assert result.returncode == 0, result.stdout[-4000:]
    cases = ElementTree.parse(report).getroot().iter("testcase")  # noqa: S314 -- the report pytest just wrote
    ran = Counter(kind for case in cases if not any(child.tag == "skipped" for child in case)
                  for kind in KINDS if f"test_acme_{kind}" in case.get("classname", "").split("."))
    assert all(ran[kind] >= 5 for kind in KINDS), ran  # each kit ran, not only the plugin kit


def test_a_skeleton_builds_the_sdist_and_wheel_it_would_publish(skeletons, tmp_path):
    folder = skeletons[0]
    run(uv(), "build", "--quiet", "--out-dir", tmp_path, folder / "acme-backend")
    (sdist,), (wheel,) = tmp_path.glob("*.tar.gz"), tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as built:
        names = built.namelist()
        entry_points = built.read("acme_backend-0.1.0.dist-info/entry_points.txt").decode()
    assert "acme_backend/hooks.py" in names and "acme_backend/model.py" in names
    assert "[grapharc]\nacme-backend = acme_backend.hooks" in entry_points
    with tarfile.open(sdist) as packed:
        assert {"acme_backend-0.1.0/README.md", "acme_backend-0.1.0/tests/test_acme_backend.py"} <= set(
            packed.getnames())
