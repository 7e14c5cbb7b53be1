"""``grapharc models``: what a spec resolves to, every backend listed, and --check reachability."""

from __future__ import annotations

import json

import pytest
import typer
from gateway_fakes import FakeOpenAI
from typer.testing import CliRunner

from grapharc.cli.models_command import add_models_command
from grapharc.gateway import get_model
from grapharc.models import BareModelSpecError
from grapharc.testing import plugin_host

GATEWAY_BACKENDS = ["claude-cli", "novita", "ollama", "openai", "openrouter"]


def models(*args: str) -> tuple[int, str, str]:
    """Run ``grapharc models ARGS`` and return (exit code, stdout, stderr)."""
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """The grapharc root, as far as this test needs one."""

    add_models_command(app)
    result = CliRunner().invoke(app, ["models", *args])
    return result.exit_code, result.stdout, result.stderr


def models_json(*args: str) -> tuple[int, dict]:
    code, stdout, _ = models(*args, "--json")
    return code, json.loads(stdout)


@pytest.fixture
def reachable(fake_openai, fake_claude, monkeypatch):
    """Every wire backend's endpoint is the fake server and every key is set."""
    for backend in ("OPENAI", "OPENROUTER", "OLLAMA", "NOVITA"):
        monkeypatch.setenv(f"{backend}_BASE_URL", fake_openai.base_url)
    for variable in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "NOVITA_API_KEY"):
        monkeypatch.setenv(variable, "a-key")
    return fake_openai


def test_core_and_the_gateway_list_mock_and_the_five_backends():
    code, document = models_json()
    assert code == 0
    by_name = {b["backend"]: b for b in document["backends"]}
    assert sorted(by_name) == sorted(["mock", *GATEWAY_BACKENDS])
    assert {by_name[name]["distribution"] for name in GATEWAY_BACKENDS} == {"grapharc-gateway"}
    assert by_name["claude-cli"]["capabilities"] == ["async", "completion"]
    assert by_name["claude-cli"]["vendor"] == "anthropic"
    assert "tools" in by_name["openrouter"]["capabilities"]


def test_core_alone_lists_only_mock():
    with plugin_host(installed=False):
        code, document = models_json()
    assert code == 0 and [b["backend"] for b in document["backends"]] == ["mock"]


def test_a_spec_shows_backend_model_vendor_capabilities_and_distribution():
    code, document = models_json("openrouter/anthropic/claude-haiku-4.5")
    assert code == 0
    assert {key: document[key] for key in ("backend", "model", "vendor", "distribution")} == {
        "backend": "openrouter", "model": "anthropic/claude-haiku-4.5", "vendor": "openrouter",
        "distribution": "grapharc-gateway"}
    assert document["capabilities"] == ["async", "completion", "streaming", "structured_output", "tools"]


def test_the_human_view_of_a_spec_names_each_part():
    code, stdout, _ = models("claude-cli/claude-sonnet-5")
    assert code == 0
    assert "backend       claude-cli" in stdout and "vendor        anthropic" in stdout


def test_a_mistyped_backend_exits_2_naming_the_known_backends():
    code, stdout, stderr = models("openrouterr/anthropic/claude-haiku-4.5")
    assert code == 2 and stdout == ""
    assert "unknown model backend 'openrouterr'" in stderr
    assert "known: claude-cli, mock, novita, ollama, openai, openrouter" in stderr


def test_a_bare_name_exits_2_with_a_suggestion_instead_of_reaching_a_paid_backend(fake_claude):
    code, document = models_json("mock")
    assert code == 2 and document["error"]["code"] == "BareModelSpecError"
    assert "mock/<model>" in document["error"]["hint"]
    with pytest.raises(BareModelSpecError):
        get_model("mock")
    assert fake_claude.runs() == []


def test_check_passes_when_the_key_is_set_and_the_endpoint_answers(reachable):
    code, document = models_json("openrouter/anthropic/claude-haiku-4.5", "--check")
    assert code == 0 and document["ok"] is True
    assert [(c["name"], c["ok"]) for c in document["checks"]] == [("key", True), ("endpoint", True)]
    assert "OPENROUTER_API_KEY is set (environment)" in document["checks"][0]["detail"]
    assert "a-key" not in json.dumps(document)
    assert reachable.requests[-1].path == "/v1/models"
    assert reachable.requests[-1].headers["authorization"] == "Bearer a-key"


def test_check_fails_with_exit_1_when_the_key_is_missing(reachable, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    code, stdout, _ = models("openai/gpt-4o-mini", "--check")
    assert code == 1
    assert "FAIL key: OPENAI_API_KEY is not set" in stdout


def test_check_fails_when_the_endpoint_rejects_the_key(monkeypatch):
    with FakeOpenAI(required_key="the-right-key") as server:
        monkeypatch.setenv("NOVITA_BASE_URL", server.base_url)
        monkeypatch.setenv("NOVITA_API_KEY", "a-wrong-key")
        code, document = models_json("novita/deepseek/deepseek-v3", "--check")
    assert code == 1
    assert document["checks"][1] == {"name": "endpoint", "ok": False,
                                     "detail": f"{server.base_url}/models answered HTTP 401"}


def test_check_fails_when_nothing_listens_at_the_endpoint(monkeypatch):
    with FakeOpenAI() as server:
        gone = server.base_url
    monkeypatch.setenv("OLLAMA_BASE_URL", gone)
    code, document = models_json("ollama/llama3.1", "--check")
    assert code == 1 and "did not answer" in document["checks"][0]["detail"]


def test_check_finds_claude_on_path_and_its_version(fake_claude):
    code, document = models_json("claude-cli/sonnet", "--check")
    assert code == 0
    (check,) = document["checks"]
    assert check["ok"] and str(fake_claude.executable) in check["detail"] and "9.9.9" in check["detail"]


def test_check_fails_when_claude_is_not_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, document = models_json("claude-cli/sonnet", "--check")
    assert code == 1 and document["checks"][0]["detail"] == "claude is not on PATH"


def test_check_without_a_spec_checks_every_backend_and_leaves_mock_unchecked(reachable):
    code, document = models_json("--check")
    assert code == 0
    by_name = {b["backend"]: b for b in document["backends"]}
    assert by_name["mock"]["ready"] is None
    assert all(by_name[name]["ready"] for name in GATEWAY_BACKENDS)
