"""Configuration: flag > env > file > built-in, provenance on every value, no upward search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.config import load_config
from grapharc.errors import ConfigurationError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_flag_beats_env_beats_file_beats_built_in(tmp_path):
    write(tmp_path / "grapharc.toml", '[grapharc]\nmodel = "mock/file"\nregistry = "a:b"\n'
          'max_rounds = 6\ntenant = "file"\n')
    env = {"GRAPHARC_MODEL": "mock/env", "GRAPHARC_REGISTRY": "c:d"}
    config = load_config({"model": "mock/flag", "max_rounds": None}, cwd=tmp_path, env=env)
    assert {name: config.value(name) for name in ("model", "registry", "max_rounds", "tenant",
                                                  "max_depth")} == {
        "model": "mock/flag", "registry": "c:d", "max_rounds": 6, "tenant": "file",
        "max_depth": 3}
    assert config.sources() == {"max_depth": "default", "max_rounds": "file", "model": "flag",
                                "registry": "env", "tenant": "file"}


def test_the_config_line_names_the_file_and_the_layers_that_supplied_values(tmp_path):
    assert load_config({}, cwd=tmp_path, env={}).line() == \
        "no grapharc.toml (flags and defaults only)"
    write(tmp_path / "grapharc.toml", '[grapharc]\nmax_rounds = 6\n')
    config = load_config({}, cwd=tmp_path, env={"GRAPHARC_TENANT": "acme"})
    assert config.line() == f"{tmp_path / 'grapharc.toml'} (max_rounds=file, tenant=env)"


def test_parent_directories_are_never_searched(tmp_path):
    write(tmp_path / "grapharc.toml", '[grapharc]\npolicy = "evil.toml"\n')
    child = tmp_path / "project"
    child.mkdir()
    config = load_config({}, cwd=child, env={})
    assert config.path is None and config.value("policy") is None


def test_config_names_a_file_anywhere_and_its_relative_paths_resolve_against_it(tmp_path):
    path = write(tmp_path / "elsewhere" / "ops.toml", '[grapharc]\npolicy = "rules/p.toml"\n'
                 'trace = "../traces/run.jsonl"\n')
    config = load_config({}, config=path, cwd=tmp_path / "elsewhere" / "..", env={})
    assert config.value("policy") == tmp_path / "elsewhere" / "rules" / "p.toml"
    assert config.value("trace") == tmp_path / "traces" / "run.jsonl"


def test_flag_and_env_paths_resolve_against_the_working_directory(tmp_path):
    config = load_config({"policy": "p.toml"}, cwd=tmp_path, env={"GRAPHARC_TRACE": "t.jsonl"})
    assert config.value("policy") == tmp_path / "p.toml"
    assert config.value("trace") == tmp_path / "t.jsonl"


@pytest.mark.parametrize(("text", "message"), [
    ("[grapharc\n", "not valid TOML.*line 1"),
    ('[grapharc]\npolcy = "x"\n', r"\[grapharc\]\.polcy is not a setting"),
    ('[other]\nx = 1\n', "unknown top-level key"),
    ('grapharc = 3\n', "must be a table"),
    ('[grapharc]\nmax_rounds = "many"\n', "max_rounds from .*must be an integer"),
    ('[grapharc]\nmax_rounds = 100000000000000000000000\n', "max_rounds from"),
    ('[grapharc]\nmax_seconds = inf\n', "max_seconds from"),
    ('[grapharc]\nmodel = ""\n', "model from .*non-empty"),
])
def test_bad_config_files_are_refused_naming_the_file_and_key(tmp_path, text, message):
    write(tmp_path / "grapharc.toml", text)
    with pytest.raises(ConfigurationError, match=message):
        load_config({}, cwd=tmp_path, env={})


def test_bad_env_values_name_the_variable(tmp_path):
    with pytest.raises(ConfigurationError, match="GRAPHARC_MAX_TOKENS: must be an integer"):
        load_config({}, cwd=tmp_path, env={"GRAPHARC_MAX_TOKENS": "lots"})


def test_a_missing_binary_or_directory_config_is_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_config({}, config=tmp_path / "nope.toml", cwd=tmp_path, env={})
    with pytest.raises(ConfigurationError, match="is a directory"):
        load_config({}, config=tmp_path, cwd=tmp_path, env={})
    write(tmp_path / "bin.toml", "")
    (tmp_path / "bin.toml").write_bytes(b"\x00\x01")
    with pytest.raises(ConfigurationError, match="binary"):
        load_config({}, config=tmp_path / "bin.toml", cwd=tmp_path, env={})


def _directory(path: Path) -> None:
    path.mkdir()


def _dangling_link(path: Path) -> None:
    path.symlink_to(path.parent / "gone.toml")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _binary(path: Path) -> None:
    path.write_bytes(b"\x00\xff[grapharc]")


@pytest.mark.parametrize(("make", "says"), [(_directory, "is a directory"),
                                            (_dangling_link, "a link to nowhere"),
                                            (_fifo, "is not a regular file"),
                                            (_binary, "is binary data")],
                         ids=["directory", "dangling-link", "fifo", "binary"])
def test_an_unusable_grapharc_toml_in_the_working_directory_is_refused_not_ignored(tmp_path, make, says):
    make(tmp_path / "grapharc.toml")
    with pytest.raises(ConfigurationError, match=says) as caught:
        load_config({}, cwd=tmp_path, env={})
    assert str(tmp_path / "grapharc.toml") in str(caught.value) and caught.value.hint


def test_a_command_run_beside_a_grapharc_toml_directory_exits_2_naming_it(tmp_path):
    (tmp_path / "grapharc.toml").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    for args in (["plan", "a goal"], ["session", "list", "--json"]):
        result = subprocess.run([sys.executable, "-m", "grapharc.cli", *args], capture_output=True,
                                text=True, cwd=tmp_path, env=env, timeout=120, stdin=subprocess.DEVNULL)
        assert result.returncode == 2, result.stdout
        assert "grapharc.toml is a directory" in result.stderr + result.stdout
        assert "Traceback" not in result.stderr


def test_a_tool_sources_table_is_kept_only_when_a_plugin_registers_that_source(tmp_path):
    from grapharc.plugins import ToolSourceInfo, hookimpl
    from grapharc.testing import in_process_source, plugin_host

    class Source:
        @staticmethod
        @hookimpl
        def register_tool_sources(register):
            register(ToolSourceInfo(name="things", factory="nowhere:open"))

    (tmp_path / "grapharc.toml").write_text('[grapharc]\nmax_rounds = 3\n[things.a]\nb = 1\n')
    with plugin_host(in_process_source(Source, name="things-source"), installed=False):
        config = load_config({}, cwd=tmp_path)
    assert config.sections == {"things": {"a": {"b": 1}}} and config.value("max_rounds") == 3
    with plugin_host(installed=False), pytest.raises(ConfigurationError, match="unknown top-level key"):
        load_config({}, cwd=tmp_path)
