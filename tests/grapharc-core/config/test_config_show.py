"""``grapharc config show``: each command's settings, with the layer and origin of every value."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app


def show(*args: str):
    return CliRunner().invoke(build_app(), ["config", "show", *args])


@pytest.fixture
def workdir(clean_workdir):
    (clean_workdir / "grapharc.toml").write_text('[grapharc]\nmodel = "mock/demo"\nmax_tokens = 9\n')
    return clean_workdir


def rows(result) -> dict[str, dict]:
    assert result.exit_code == 0, result.output
    return {row["name"]: row for row in json.loads(result.stdout)["settings"]}


def test_each_value_names_the_layer_and_origin_it_came_from(workdir, monkeypatch):
    monkeypatch.setenv("GRAPHARC_TENANT", "acme")
    settings = rows(show("--command", "agent", "--json"))
    assert (settings["model"]["value"], settings["model"]["source"]) == ("mock/demo", "file")
    assert settings["model"]["origin"] == str(workdir / "grapharc.toml")
    assert (settings["tenant"]["source"], settings["tenant"]["origin"]) == ("env", "GRAPHARC_TENANT")
    assert settings["sessions"]["source"] == "unset"


@pytest.mark.parametrize(("command", "registry", "sessions"), [
    ("plan", "grapharc.examples.plan_incident:build_registry", "unset"), ("run", "plugins", "unset"),
    ("agent", None, "unset"), ("serve", None, "default"), ("session", None, "default")])
def test_each_command_shows_its_own_built_ins(workdir, command, registry, sessions):
    settings = rows(show("--command", command, "--json"))
    assert settings["registry"]["value"] == registry
    assert settings["sessions"]["source"] == sessions


def test_the_human_view_has_a_line_per_setting_with_its_layer(workdir):
    result = show("--command", "serve")
    assert result.exit_code == 0
    assert re.search(r"^max_tokens +9  \[file: ", result.stdout, re.MULTILINE)
    assert "sessions " in result.stdout and "[default: built-in]" in result.stdout


def test_an_unknown_command_or_a_bad_file_exits_2_with_one_document(workdir):
    unknown = show("--command", "nope", "--json")
    assert unknown.exit_code == 2 and json.loads(unknown.stdout)["error"]["code"] == "UnknownCommandError"
    (workdir / "grapharc.toml").write_text("[grapharc]\nmax_tokens = -1\n")
    bad = show("--json")
    assert bad.exit_code == 2 and "max_tokens" in json.loads(bad.stdout)["error"]["message"]
