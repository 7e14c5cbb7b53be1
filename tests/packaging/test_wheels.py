"""Build every wheel, install them into clean virtualenvs, and prove the plugin story.

Marked ``packaging``: it builds eight wheels and makes three virtualenvs
(dependencies come from the package index through uv's cache). The Python
under test is ``GRAPHARC_PACKAGING_PYTHON`` (default: this interpreter), so CI
can repeat it under 3.12 and 3.13.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from wheel_venvs import ROOT, build_wheel, make_venv, run, uv

pytestmark = pytest.mark.packaging

FIXTURE = ROOT / "tests" / "fixtures" / "grapharc-fixture-plugin"
LEAVES = {
    "grapharc-core": "grapharc/",
    "grapharc-gateway": "grapharc/gateway/",
    "grapharc-tools": "grapharc/tools/",
    "grapharc-memory-sqlite": "grapharc/memory/sqlite/",
    "grapharc-memory-ladybug": "grapharc/memory/ladybug/",
    "grapharc-server": "grapharc/server/",
    "grapharc-postgres": "grapharc/postgres/",
    "grapharc-mcp": "grapharc/mcp/",
}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    for dist in LEAVES:
        build_wheel(dist, out)
    run(uv(), "build", "--wheel", "--out-dir", out, "--quiet", FIXTURE, cwd=ROOT)
    built = {path.name.split("-")[0].replace("_", "-"): path for path in out.glob("*.whl")}
    assert set(built) == {*LEAVES, "grapharc-fixture-plugin"}, sorted(built)
    return built


def backends_json(venv: Path) -> list[str]:
    result = run(venv / "bin" / "grapharc", "models", "--json")
    return sorted(backend["backend"] for backend in json.loads(result.stdout)["backends"])


def plugins_json(venv: Path) -> dict[str, dict]:
    result = run(venv / "bin" / "grapharc", "plugins", "--json")
    return {d["name"]: d for d in json.loads(result.stdout)["distributions"]}


@pytest.mark.parametrize("dist", sorted(LEAVES))
def test_each_wheel_ships_only_its_own_leaf(wheels: dict[str, Path], dist: str):
    names = [n for n in zipfile.ZipFile(wheels[dist]).namelist() if ".dist-info/" not in n]
    assert names, f"{dist} wheel is empty"
    assert all(name.startswith(LEAVES[dist]) for name in names), names
    shipped_inits = {"grapharc/__init__.py", "grapharc/memory/__init__.py"} & set(names)
    if dist == "grapharc-core":
        assert shipped_inits == {"grapharc/__init__.py", "grapharc/memory/__init__.py"}
    else:
        assert shipped_inits == set(), f"{dist} would overwrite core's package files"


def test_core_alone_is_a_working_product(wheels: dict[str, Path], tmp_path: Path):
    venv = make_venv(tmp_path, "core", wheels["grapharc-core"])
    listed = plugins_json(venv)
    assert list(listed) == ["grapharc-core"]
    assert listed["grapharc-core"]["registered"]["model_backends"] == ["mock"]
    assert backends_json(venv) == ["mock"]
    failed = run(venv / "bin" / "python", "-c", "import grapharc.gateway", check=False)
    assert failed.returncode == 1
    assert "pip install ./grapharc-gateway" in failed.stderr
    reply = run(venv / "bin" / "python", "-c",
                "from grapharc.models import get_model;"
                "print(get_model('mock/x', responses=['ok']).invoke('q').content)")
    assert reply.stdout.strip() == "ok"
    demo = run(venv / "bin" / "grapharc", "demo", "stage0", "--json", cwd=tmp_path)
    assert json.loads(demo.stdout)["ok"] is True
    assert (tmp_path / ".grapharc" / "traces" / "stage0.jsonl").is_file()


def test_core_alone_names_the_distribution_of_each_command_and_store_a_plugin_provides(
        wheels: dict[str, Path], tmp_path: Path):
    venv = make_venv(tmp_path, "core-hints", wheels["grapharc-core"])
    for args, dist in (
            (["serve"], "grapharc-server"), (["db", "migrate"], "grapharc-postgres"),
            (["mcp", "list"], "grapharc-mcp"),
            (["memory", "add", "a", "b", "c", "--source", "s", "--memory", "sqlite:c.db"],
             "grapharc-memory-sqlite"),
            (["session", "list", "--sessions", "postgresql://user@127.0.0.1/db"], "grapharc-postgres")):
        refused = run(venv / "bin" / "grapharc", *args, "--json", check=False, cwd=tmp_path)
        error = json.loads(refused.stdout)["error"]
        assert refused.returncode == 2 and f"pip install ./{dist}" in error["hint"], (args, error)


def test_a_third_party_plugin_adds_its_kind_and_command(wheels: dict[str, Path], tmp_path: Path):
    venv = make_venv(tmp_path, "fixture", wheels["grapharc-core"],
                     wheels["grapharc-fixture-plugin"])
    listed = plugins_json(venv)
    fixture = listed["grapharc-fixture-plugin"]
    assert fixture["status"] == "loaded"
    assert fixture["registered"] == {"node_kinds": ["triage_ticket"], "commands": ["fixture-hello"]}
    hello = run(venv / "bin" / "grapharc", "fixture-hello", "--json")
    assert json.loads(hello.stdout) == {"hello": "from grapharc-fixture-plugin"}
    kinds = run(venv / "bin" / "python", "-c",
                "from grapharc.planner.surface import registry_from_plugins;"
                "print(' '.join(sorted(registry_from_plugins().kinds())))")
    assert "triage_ticket" in kinds.stdout.split()
    (tmp_path / "ticket.json").write_text(json.dumps({
        "nodes": [{"name": "triage_ticket"}],
        "edges": [{"source": "__start__", "target": "triage_ticket"}],
        "input": {"goal": "checkout outage"}}))
    ran = run(venv / "bin" / "grapharc", "run", "ticket.json", "--max-tokens", "10", "--json",
              cwd=tmp_path)
    assert json.loads(ran.stdout)["state"]["label"] == "urgent"


PLUGIN_PAGE = ROOT / "docs" / "concepts" / "plugins.md"
"""The docs page whose "Write your own plugin" section these tests build and install."""


def readme_block(language: str, section: str = "## Write your own plugin") -> str:
    """The first ``language`` code block of a section of docs/concepts/plugins.md."""
    text = PLUGIN_PAGE.read_text().split(section, 1)[1]
    return re.search(rf"```{language}[^\n]*\n(.*?)```", text, re.S).group(1)


def readme_plugin_project(folder: Path) -> Path:
    """The plugin page's plugin as a project: its hooks module and entry point, verbatim."""
    package = folder / "src" / "my_grapharc_plugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "hooks.py").write_text(readme_block("python"))
    project = readme_block("toml").replace(
        "[project]\n", '[project]\nname = "my-grapharc-plugin"\nversion = "0.1.0"\n'
        'requires-python = ">=3.11"\n', 1)
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling>=1.25"]\nbuild-backend = "hatchling.build"\n\n'
        + project + '\n[tool.hatch.build.targets.wheel]\npackages = ["src/my_grapharc_plugin"]\n')
    return folder


def test_the_readmes_plugin_example_is_admitted_and_runs_end_to_end(wheels: dict[str, Path],
                                                                    tmp_path: Path):
    project = readme_plugin_project(tmp_path / "my-grapharc-plugin")
    run(uv(), "build", "--wheel", "--out-dir", tmp_path / "plugin-wheel", "--quiet", project)
    plugin_wheel = next((tmp_path / "plugin-wheel").glob("*.whl"))
    venv = make_venv(tmp_path, "readme", wheels["grapharc-core"], plugin_wheel)
    work = tmp_path / "work"
    work.mkdir()
    (work / "graph.json").write_text(readme_block("json"))
    grapharc = venv / "bin" / "grapharc"

    checked = json.loads(run(grapharc, "run", "graph.json", "--check-only", "--json",
                             cwd=work).stdout)
    ran = json.loads(run(grapharc, "run", "graph.json", "--max-tokens", "100", "--json",
                         cwd=work).stdout)
    hello = run(grapharc, "hello")

    assert (checked["admission"]["status"], checked["executed"]) == ("admitted", False)
    assert ran["executed"] and ran["state"]["answer"] == "looked up the weather"
    assert hello.stdout == "hello from my plugin\n"


def test_every_distribution_and_the_fixture_list_everything(wheels: dict[str, Path], tmp_path: Path):
    venv = make_venv(tmp_path, "all", *wheels.values())
    listed = plugins_json(venv)
    assert set(listed) == {*LEAVES, "grapharc-fixture-plugin"}
    assert {d["status"] for d in listed.values()} == {"loaded"}
    backends = listed["grapharc-gateway"]["registered"]["model_backends"]
    assert {"openai", "openrouter", "ollama", "novita"} <= set(backends)
    assert backends_json(venv) == ["claude-cli", "mock", "novita", "ollama", "openai", "openrouter"]
    assert listed["grapharc-server"]["registered"]["commands"] == ["serve"]
    assert listed["grapharc-postgres"]["registered"]["commands"] == ["db"]
    assert listed["grapharc-mcp"]["registered"]["commands"] == ["mcp"]
    plugin_first = run(
        venv / "bin" / "python", "-c",
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import grapharc; from grapharc import GraphARC;"
        "import grapharc.gateway, grapharc.memory.sqlite;"
        "print(grapharc.__file__)",
        ROOT / "grapharc-gateway" / "src")
    assert "site-packages/grapharc/__init__.py" in plugin_first.stdout
