"""Every kind ``grapharc plugin new`` writes installs beside the core-only wheel and passes its own tests.

Marked ``packaging``. One virtualenv holds the core wheel, pytest and the five skeletons (built
from their folders by uv, dependencies from uv's cache), so each skeleton's tests also run with
the four others installed: their names never collide. The five test folders run in one pytest
process, as each project's own ``pytest`` would, to pay for one interpreter start, not five.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest
from wheel_venvs import build_wheel, make_venv, run

from grapharc.plugins.skeleton import KINDS
from grapharc.testing.cli import run_cli

pytestmark = pytest.mark.packaging

REGISTERED = {"backend": {"model_backends": ["acme-backend"]},
              "store": {"stores": ["acme-store:artifacts"]},
              "executor": {"executors": ["acme-executor"]},
              "tools": {"tools": ["acme_tools_word_count"]},
              "kind": {"node_kinds": ["acme_kind"]}}


@pytest.fixture(scope="module")
def skeletons(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A folder of one skeleton per kind, and the virtualenv they are installed in."""
    folder = tmp_path_factory.mktemp("skeletons")
    for kind in KINDS:
        written = run_cli(["plugin", "new", f"acme-{kind}", "--kind", kind, "--dir", folder / f"acme-{kind}"])
        assert written.exit_code == 0, written.output
    core = build_wheel("grapharc-core", tmp_path_factory.mktemp("wheels"))
    venv = make_venv(folder, "venv", core, "pytest", *(folder / f"acme-{kind}" for kind in KINDS))
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
