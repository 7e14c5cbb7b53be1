"""Every hint that tells a user to install something says how to get it from this repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc._missing import PLUGIN_PACKAGES, MissingPluginFinder, install_hint
from grapharc.models import UnknownBackendError, resolve_backend
from grapharc.testing import plugin_host

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(ROOT.glob("grapharc-*/src/**/*.py"))
HELPER = ROOT / "grapharc-core" / "src" / "grapharc" / "_missing.py"


INSTALLS_A_DISTRIBUTION = re.compile(r"pip install [^\n]*grapharc")
"""A hint installing one of GraphARC's distributions (a plugin author's ``pip install -e .`` of
their own project is not one)."""


def test_only_the_install_hint_helper_spells_out_a_pip_install_of_grapharc():
    spelled = [str(path.relative_to(ROOT)) for path in SOURCES
               if path != HELPER and INSTALLS_A_DISTRIBUTION.search(path.read_text())]
    assert spelled == []
    assert INSTALLS_A_DISTRIBUTION.search("run pip install grapharc-server first")
    assert not INSTALLS_A_DISTRIBUTION.search("cd acme && pip install -e '.[test]'")


@pytest.mark.parametrize("dist", sorted(set(PLUGIN_PACKAGES.values())))
def test_the_hint_installs_from_the_checkout_or_the_built_wheel_never_from_pypi(dist):
    hint = install_hint(dist)
    assert "not on PyPI yet" in hint and f"pip install ./{dist}" in hint
    assert f"make wheels, then pip install dist/{dist.replace('-', '_')}-*.whl" in hint
    assert not re.search(rf"pip install {dist}\b", hint)
    assert (ROOT / dist / "pyproject.toml").is_file()


@pytest.mark.parametrize(("module", "dist"), sorted(PLUGIN_PACKAGES.items()))
def test_a_missing_plugin_package_names_the_distribution_and_how_to_install_it(module, dist):
    with pytest.raises(ModuleNotFoundError) as caught:
        MissingPluginFinder.find_spec(module)
    assert install_hint(dist) in str(caught.value)


def test_an_unknown_backend_says_how_to_get_the_gateway():
    with plugin_host(installed=False), pytest.raises(UnknownBackendError) as caught:
        resolve_backend("openai/gpt-4o")
    assert install_hint("grapharc-gateway") in caught.value.hint


def test_the_command_line_shows_the_hint_for_a_backend_it_lacks():
    result = subprocess.run([sys.executable, "-m", "grapharc", "models", "openai/gpt-4o"],
                            capture_output=True, text=True, timeout=120,
                            env={"GRAPHARC_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    assert "pip install ./grapharc-gateway" in result.stderr and "not on PyPI yet" in result.stderr


WHAT_PLUGINS_PROVIDE = [
    (["serve"], "grapharc-server"),
    (["db", "migrate"], "grapharc-postgres"),
    (["mcp", "list"], "grapharc-mcp"),
    (["memory", "add", "a", "b", "c", "--source", "s", "--memory", "sqlite:claims.db"],
     "grapharc-memory-sqlite"),
    (["memory", "add", "a", "b", "c", "--source", "s", "--memory", "ladybug:claims.lbug"],
     "grapharc-memory-ladybug"),
    (["session", "list", "--sessions", "postgresql://user@127.0.0.1/db"], "grapharc-postgres"),
]
"""A command or store URI each of GraphARC's own plugins provides, and that plugin."""


@pytest.mark.parametrize(("args", "dist"), WHAT_PLUGINS_PROVIDE, ids=lambda value: str(value)[:40])
def test_with_core_alone_what_a_plugin_provides_names_the_distribution_to_install(args, dist, tmp_path):
    result = subprocess.run([sys.executable, "-m", "grapharc", *args], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path,
                            env={"GRAPHARC_LOAD_PLUGINS": "", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2, result.stderr
    assert install_hint(dist) in result.stderr
