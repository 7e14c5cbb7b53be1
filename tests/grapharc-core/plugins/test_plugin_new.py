"""``grapharc plugin new`` writes a plugin distribution of each kind, and refuses what it cannot write.

The skeletons' own tests run where they belong, installed beside the core-only wheel
(tests/packaging/test_plugin_skeletons.py); here the files are checked, and each skeleton's hook
module registers, in this process, the one name its README and its test say it does.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from grapharc.plugins.host import core_requirement, supports_this_core
from grapharc.plugins.skeleton import KINDS, core_range
from grapharc.testing import in_process_source, plugin_host
from grapharc.testing.cli import run_cli

IMPLEMENTATION = {"backend": "model.py", "store": "store.py", "executor": "executor.py",
                  "tools": "tools.py", "kind": None}
REGISTERED = {"backend": ("model_backends", "acme-backend"), "store": ("stores", "acme-store:artifacts"),
              "executor": ("executors", "acme-executor"), "tools": ("tools", "acme_tools_word_count"),
              "kind": ("node_kinds", "acme_kind")}


def new(*args: str | Path) -> tuple[int, dict]:
    result = run_cli(["plugin", "new", *map(str, args), "--json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_writes_a_distribution_with_its_entry_point_range_hooks_and_kit_test(kind, tmp_path):
    folder = tmp_path / f"acme-{kind}"
    code, document = new(f"acme-{kind}", "--kind", kind, "--dir", folder)
    module = f"acme_{kind}"
    expected = {"README.md", "pyproject.toml", f"src/{module}/__init__.py", f"src/{module}/hooks.py",
                f"tests/test_{module}.py"}
    if IMPLEMENTATION[kind]:
        expected.add(f"src/{module}/{IMPLEMENTATION[kind]}")
    written = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
    assert code == 0 and document["ok"] and set(document["files"]) == expected == written
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert project["name"] == f"acme-{kind}"
    assert project["entry-points"]["grapharc"] == {f"acme-{kind}": f"{module}.hooks"}
    requires = core_requirement(project["dependencies"])
    assert requires == core_range() and supports_this_core(requires) is None
    for path in folder.rglob("*"):
        if path.is_file():
            assert "$" not in path.read_text().replace("$ ", ""), f"a placeholder left in {path}"
    assert document["registers"] == REGISTERED[kind][1].partition(":")[0]  # a store's scheme


@pytest.mark.parametrize("kind", KINDS)
def test_each_skeletons_hooks_register_the_name_it_says(kind, tmp_path, monkeypatch):
    folder = tmp_path / "plugin"
    new(f"acme-{kind}", "--kind", kind, "--dir", folder)
    monkeypatch.syspath_prepend(str(folder / "src"))
    monkeypatch.delitem(sys.modules, f"acme_{kind}", raising=False)
    hooks = importlib.import_module(f"acme_{kind}.hooks")
    facet, name = REGISTERED[kind]
    with plugin_host(in_process_source(hooks, name=f"acme-{kind}"), installed=False) as host:
        assert name in host.registry(facet)
        assert host.records[f"acme-{kind}"].registered == {facet: [name]}
    for module in [m for m in sys.modules if m == f"acme_{kind}" or m.startswith(f"acme_{kind}.")]:
        monkeypatch.delitem(sys.modules, module)


@pytest.mark.parametrize("kind", KINDS)
def test_the_skeleton_passes_ruff_as_its_own_project_would_run_it(kind, tmp_path):
    new(f"acme-{kind}", "--kind", kind, "--dir", tmp_path)
    ruff = Path(sys.executable).parent / "ruff"
    checked = subprocess.run([ruff, "check", "--isolated", "--select", "E,F,W,I,UP,B,SIM,RUF", "--config",
                              "src = ['src']", "--line-length", "110", "--target-version", "py311", "."],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize("name", ["Acme", "1acme", "acme_echo", "acme--echo", "acme-", "",
                                  "a" * 41, "json", "grapharc", "grapharc-core", "class"])
def test_a_name_that_is_no_plugin_distribution_is_refused_naming_it(name, tmp_path):
    code, document = new(name, "--kind", "backend", "--dir", tmp_path / "plugin")
    assert code == 2 and document["error"]["code"] == "PluginSkeletonError"
    assert repr(name) in document["error"]["message"]
    assert not (tmp_path / "plugin").exists()


def test_an_unknown_kind_is_refused_listing_the_kinds(tmp_path):
    code, document = new("acme-echo", "--kind", "model", "--dir", tmp_path / "plugin")
    assert code == 2 and "'model'" in document["error"]["message"]
    assert all(kind in document["error"]["message"] for kind in KINDS)
    assert not (tmp_path / "plugin").exists()


def test_a_folder_in_use_is_refused_and_left_as_it_was(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    code, document = new("acme-echo", "--kind", "backend", "--dir", tmp_path)
    assert code == 2 and str(tmp_path) in document["error"]["message"]
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


def test_a_file_where_the_folder_belongs_is_refused(tmp_path):
    (tmp_path / "taken").write_text("a file")
    code, document = new("acme-echo", "--kind", "backend", "--dir", tmp_path / "taken")
    assert code == 2 and "not a folder" in document["error"]["message"]


def test_without_json_it_says_where_it_wrote_and_what_to_run_next(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_cli(["plugin", "new", "acme-echo", "--kind", "backend"])
    assert result.exit_code == 0 and (tmp_path / "acme-echo" / "pyproject.toml").is_file()
    assert result.stdout.startswith("wrote acme-echo (backend: acme-echo) in acme-echo:\n")
    assert result.stdout.endswith("next: cd acme-echo && pip install -e '.[test]' && pytest\n")


@pytest.mark.parametrize(("version", "expected"), [("0.1.0", ">=0.1,<0.2"), ("0.12.3", ">=0.12,<0.13"),
                                                   ("1.4.2", ">=1.4,<2"), ("2.0.0rc1", ">=2.0,<3")])
def test_a_new_plugin_supports_this_cores_series(version, expected):
    assert core_range(version) == expected
