"""What every command shares: one ``--json`` option, and the session directory as a setting
resolved like every other (flag > GRAPHARC_SESSIONS > grapharc.toml > default)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

import grapharc.cli
from grapharc.cli.main import build_app

CLI_DIR = Path(grapharc.cli.__file__).parent


def json_option_definitions(path: Path) -> list[int]:
    """Lines of ``path`` that build a ``--json`` option themselves."""
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Option"
            and any(isinstance(arg, ast.Constant) and arg.value == "--json" for arg in node.args)]


def test_the_json_option_is_defined_once_for_every_core_command():
    defined = {path.name: lines for path in sorted(CLI_DIR.glob("*.py"))
               if (lines := json_option_definitions(path))}
    assert list(defined) == ["output.py"] and len(defined["output.py"]) == 1


@pytest.fixture
def broken_store(tmp_path: Path) -> Path:
    """A session directory whose store is not a database, so using it names its path."""
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "sessions.db").write_bytes(b"not a database" * 100)
    return folder


def session_list(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(build_app(), ["session", "list", *args], env=env)


def test_grapharc_sessions_names_the_session_directory(broken_store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = session_list(env={"GRAPHARC_SESSIONS": str(broken_store)})
    assert result.exit_code == 2 and f"cannot use {broken_store / 'sessions.db'}" in result.stderr


def test_the_config_file_names_the_session_directory_relative_to_itself(broken_store, tmp_path,
                                                                          monkeypatch):
    (tmp_path / "grapharc.toml").write_text('[grapharc]\nsessions = "broken"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHARC_SESSIONS", raising=False)
    result = session_list()
    assert result.exit_code == 2 and f"cannot use {broken_store / 'sessions.db'}" in result.stderr


def test_the_dir_flag_beats_the_environment(broken_store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = session_list("--dir", str(tmp_path / "elsewhere"), "--json",
                          env={"GRAPHARC_SESSIONS": str(broken_store)})
    assert result.exit_code == 0 and result.stdout.strip().startswith("{")


def test_an_unusable_sessions_value_is_a_configuration_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = session_list("--json", env={"GRAPHARC_SESSIONS": "   "})
    assert result.exit_code == 2 and '"code": "ConfigurationError"' in result.stdout
