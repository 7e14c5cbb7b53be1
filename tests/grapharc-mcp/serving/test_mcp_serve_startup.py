"""``grapharc mcp serve`` refuses to start, with one line naming what is wrong (exit 2, no
traceback), when there is nothing it could serve rightly: no registry, a registry that cannot be
loaded or registers nothing, a graph whose name is no MCP tool name or is a reader's name, or an
HTTP address that is not HOST:PORT, cannot be listened on, or is off loopback without the flag.

Each refusal is checked through the command's entry point in this process (``grapharc.cli.main.run``,
what ``python -m grapharc.cli`` exits with); the tests that start a server process, and the one that
is refused a port in use, show that nothing else reaches a user of the process itself."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path

import pytest
from mcp_serve_process import http_server, run, serve_command

from grapharc.cli.main import run as grapharc_run


@pytest.mark.parametrize(("registry", "options", "named"), [
    ("", (), "no graph to serve"),
    ("no_such_module:register", (), "registry 'no_such_module:register' cannot be loaded"),
    ("mcp_serve_graphs:register_nothing", (), "registered no graph"),
    ("mcp_serve_graphs:register_badly_named", (), "graph 'weekly report' cannot be offered as an MCP tool"),
    ("mcp_serve_graphs:register_reader_named", (), "graph 'thread_status' has the name of the thread_status"),
    ("mcp_serve_graphs:register", ("--http", "localhost"), "--http 'localhost' is not HOST:PORT"),
    ("mcp_serve_graphs:register", ("--http", "127.0.0.1:70000"), "is not HOST:PORT"),
    ("mcp_serve_graphs:register", ("--http", "0.0.0.0:0"), "refusing to serve MCP on 0.0.0.0"),
])
def test_what_cannot_be_served_is_refused_naming_it(tmp_path: Path, registry: str, options: tuple[str, ...],
                                                    named: str, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHARC_DEBUG", "")  # as mcp_serve_process.environment() runs it
    command = serve_command(tmp_path / "sessions", *options, registry=registry)
    if not registry:
        command = command[:command.index("--registry")] + list(options)
    status = grapharc_run(command[command.index("grapharc.cli") + 1:])
    refused = capsys.readouterr()
    assert status == 2, refused.err
    assert named in refused.err and "Traceback" not in refused.err
    assert refused.out == ""  # nothing on the wire a stdio client reads


def test_off_loopback_refusal_says_why_and_how(tmp_path: Path) -> None:
    refused = run(serve_command(tmp_path / "sessions", "--http", "0.0.0.0:0", "--json"))
    assert refused.returncode == 2
    error = json.loads(refused.stdout)["error"]
    assert "no authentication" in error["message"] and "--allow-remote" in error["hint"]


def test_a_port_in_use_is_refused_naming_it(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        refused = run(serve_command(tmp_path / "sessions", "--http", f"127.0.0.1:{port}"))
    assert refused.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in refused.stderr and "Traceback" not in refused.stderr


def test_allow_remote_serves_off_loopback_and_warns_there_is_no_auth(tmp_path: Path) -> None:
    with http_server(serve_command(tmp_path / "sessions", "--http", "0.0.0.0:0", "--allow-remote")) as server:
        line = server.stderr_line_containing("serving MCP on")
        assert "http://0.0.0.0:" in line and "WARNING: no authentication, and not on loopback" in line
        server.process.send_signal(signal.SIGTERM)
        assert server.wait() == 0


def test_the_sessions_setting_comes_from_the_config_file_as_for_grapharc_serve(tmp_path: Path) -> None:
    """Without --sessions, the store is the one ``--config``'s grapharc.toml names; a folder there
    that is a file is refused naming it, so the setting was read."""
    elsewhere = tmp_path / "settings"  # not the working directory, where grapharc.toml is looked for
    elsewhere.mkdir()
    (elsewhere / "not-a-folder").write_text("")
    (elsewhere / "grapharc.toml").write_text('[grapharc]\nsessions = "not-a-folder"\n')
    command = serve_command(tmp_path / "unused", "--config", str(elsewhere / "grapharc.toml"))
    command[command.index("--sessions"):command.index("--sessions") + 2] = []
    refused = run(command, cwd=tmp_path)  # without the setting: a store under tmp_path, served
    assert refused.returncode == 2 and "not-a-folder is a file" in refused.stderr, refused.stderr


def test_what_a_registry_prints_goes_to_stderr_never_onto_stdout(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """stdout is the stdio transport's (and the ``--json`` document's): a registry's print there
    would corrupt it, so the registry's words go to stderr. Refused on the address only after the
    registry ran, so no server starts."""
    command = serve_command(tmp_path / "sessions", "--http", "localhost", "--json",
                            registry="mcp_serve_graphs:register_chattily")
    status = grapharc_run(command[command.index("grapharc.cli") + 1:])
    said = capsys.readouterr()
    assert status == 2
    assert "is not HOST:PORT" in json.loads(said.out)["error"]["message"]
    assert "registering <grapharc.session.manager.SessionManager" in said.err
